//go:build amd64 && !purego

#include "textflag.h"

// func laneSumAVX2(v *float32, n int, acc *[4]float64) uint32
//
// acc[l] += float64(v[k+l])² for k = 0, 4, … < n (n a multiple of 4), one
// multiply and one add per element in element order within each lane (no
// fused multiply-add): laneSum's scalar loop bit for bit. Returns the
// largest |v[k]| as float32 bits (max of the bits with the sign cleared).
TEXT ·laneSumAVX2(SB), NOSPLIT, $0-28
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         acc+16(FP), DX
	VMOVUPD      (DX), Y0
	VPXOR        X1, X1, X1
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X2
	VPBROADCASTD X2, X2

loop:
	CMPQ      CX, $4
	JL        done
	VMOVUPS   (SI), X3
	VCVTPS2PD X3, Y4
	VMULPD    Y4, Y4, Y4
	VADDPD    Y4, Y0, Y0
	VPAND     X2, X3, X3
	VPMAXUD   X3, X1, X1
	ADDQ      $16, SI
	SUBQ      $4, CX
	JMP       loop

done:
	VMOVUPD Y0, (DX)
	VPSHUFD $0x4e, X1, X3
	VPMAXUD X3, X1, X1
	VPSHUFD $0xb1, X1, X3
	VPMAXUD X3, X1, X1
	VMOVD   X1, AX
	MOVL    AX, ret+24(FP)
	VZEROUPPER
	RET

// func laneSumAVX512(v *float32, n int, acc *[4]float64) uint32
//
// laneSumAVX2 eight elements at a time: both groups of four are converted
// and squared in one Z register, then added to the four lanes one group
// after the other, as laneSumAVX2 adds them, so each lane sees the same
// additions in the same order (an eight-lane accumulator would reorder the
// sum and change its bits). A last group of four, if n is not a multiple
// of 8, takes laneSumAVX2's step.
TEXT ·laneSumAVX512(SB), NOSPLIT, $0-28
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         acc+16(FP), DX
	VMOVUPD      (DX), Y0
	VPXOR        Y1, Y1, Y1
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X2
	VPBROADCASTD X2, Y2

loop8:
	CMPQ          CX, $8
	JL            last4
	VMOVUPS       (SI), Y3
	VCVTPS2PD     Y3, Z4
	VMULPD        Z4, Z4, Z4
	VEXTRACTF64X4 $1, Z4, Y5
	VADDPD        Y4, Y0, Y0 // elements k … k+3
	VADDPD        Y5, Y0, Y0 // then k+4 … k+7
	VPAND         Y2, Y3, Y3
	VPMAXUD       Y3, Y1, Y1
	ADDQ          $32, SI
	SUBQ          $8, CX
	JMP           loop8

last4:
	CMPQ      CX, $4
	JL        done512
	VMOVUPS   (SI), X3
	VCVTPS2PD X3, Y4
	VMULPD    Y4, Y4, Y4
	VADDPD    Y4, Y0, Y0
	VPAND     X2, X3, X3
	VPMAXUD   Y3, Y1, Y1

done512:
	VMOVUPD      Y0, (DX)
	VEXTRACTI128 $1, Y1, X3
	VPMAXUD      X3, X1, X1
	VPSHUFD      $0x4e, X1, X3
	VPMAXUD      X3, X1, X1
	VPSHUFD      $0xb1, X1, X3
	VPMAXUD      X3, X1, X1
	VMOVD        X1, AX
	MOVL         AX, ret+24(FP)
	VZEROUPPER
	RET
