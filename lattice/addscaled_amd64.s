//go:build amd64 && !purego

#include "textflag.h"

// func addScaledAVX512(x *float32, n int, t float64, acc *int64) int
//
// acc[j] += int64(float64(x[j])·t) for j < n (n a multiple of 8), eight at
// a time: VCVTPS2PD widens exactly, VMULPD is the scalar loop's multiply
// (round to nearest), and VCVTTPD2QQ truncates toward zero as CVTTSD2SQ
// does, with the same 0x8000000000000000 for NaN or out of range. Returns n.
TEXT ·addScaledAVX512(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD t+16(FP), Z0
	MOVQ         acc+24(FP), DI
	MOVQ         CX, ret+32(FP)

loop16:
	CMPQ       CX, $16
	JL         loop8
	VCVTPS2PD  (SI), Z1
	VCVTPS2PD  32(SI), Z2
	VMULPD     Z0, Z1, Z1
	VMULPD     Z0, Z2, Z2
	VCVTTPD2QQ Z1, Z1
	VCVTTPD2QQ Z2, Z2
	VPADDQ     (DI), Z1, Z1
	VPADDQ     64(DI), Z2, Z2
	VMOVDQU64  Z1, (DI)
	VMOVDQU64  Z2, 64(DI)
	ADDQ       $64, SI
	ADDQ       $128, DI
	SUBQ       $16, CX
	JMP        loop16

loop8:
	CMPQ       CX, $8
	JL         done
	VCVTPS2PD  (SI), Z1
	VMULPD     Z0, Z1, Z1
	VCVTTPD2QQ Z1, Z1
	VPADDQ     (DI), Z1, Z1
	VMOVDQU64  Z1, (DI)

done:
	VZEROUPPER
	RET

// func addScaledAVX2(x *float32, n int, t float64, acc *int64) int
//
// addScaledAVX512 four at a time without VCVTTPD2QQ: y = float64(x[j])·t
// (the same multiply), truncated by VROUNDPD; for |y| < 2⁵¹ the integer
// trunc(y) + 1.5·2⁵² is exact in [2⁵², 2⁵³), where doubles are the integers
// and the bits grow by one per unit, so its bits minus the constant's are
// int64(trunc(y)). A group with some |y| ≥ 2⁵¹ or NaN stops the loop before
// it is added; the return value is the count done, the caller's scalar loop
// does the rest (a clipped vector has |y| ≤ 2ᵏ, so this is rare).
TEXT ·addScaledAVX2(SB), NOSPLIT, $0-40
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD t+16(FP), Y0
	MOVQ         acc+24(FP), DI
	MOVQ         $0x4338000000000000, AX // 1.5·2⁵²
	MOVQ         AX, X5
	VPBROADCASTQ X5, Y5
	MOVQ         $0x4320000000000000, AX // 2⁵¹
	MOVQ         AX, X6
	VPBROADCASTQ X6, Y6
	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X7
	VPBROADCASTQ X7, Y7
	XORQ         BX, BX

loop4:
	CMPQ      CX, $4
	JL        done2
	VCVTPS2PD (SI), Y1
	VMULPD    Y0, Y1, Y1
	VANDPD    Y7, Y1, Y2
	VCMPPD    $5, Y6, Y2, Y2 // not (|y| < 2⁵¹): also true for NaN
	VMOVMSKPD Y2, AX
	TESTL     AX, AX
	JNZ       done2
	VROUNDPD  $3, Y1, Y1 // toward zero
	VADDPD    Y5, Y1, Y1
	VPSUBQ    Y5, Y1, Y1
	VPADDQ    (DI), Y1, Y1
	VMOVDQU   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	ADDQ      $4, BX
	SUBQ      $4, CX
	JMP       loop4

done2:
	MOVQ BX, ret+32(FP)
	VZEROUPPER
	RET
