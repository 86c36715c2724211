//go:build amd64 && !purego

#include "textflag.h"

// The AVX-512 forms of elem_amd64.s's passes: sixteen float32 at a time,
// the same operations in the same order with the same roundings (no fused
// multiply-add), so every lane equals the Go loop's result bit for bit.
// n is a multiple of 16; the callers run the AVX2 pass on a last 8.

// func reluFwdAVX512(y, x *float32, n int)
TEXT ·reluFwdAVX512(SB), NOSPLIT, $0-24
	MOVQ   y+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VPXORD Z15, Z15, Z15

relu_loop:
	CMPQ    CX, $16
	JL      relu_done
	VMOVUPS (SI), Z0
	VMAXPS  Z0, Z15, Z0 // (0 > x) ? 0 : x, NaN and −0 as in reluFwdAVX
	VADDPS  Z15, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     relu_loop

relu_done:
	VZEROUPPER
	RET

// func reluBackAVX512(dx, out, dy *float32, n int)
//
// dx = dy where out's bits are non-zero, else +0.
TEXT ·reluBackAVX512(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ out+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX

rb_loop:
	CMPQ        CX, $16
	JL          rb_done
	VMOVDQU32   (SI), Z0
	VPTESTMD    Z0, Z0, K1       // lanes whose out bits are non-zero
	VMOVDQU32.Z (DX), K1, Z1     // dy there, +0 elsewhere
	VMOVDQU32   Z1, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DX
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         rb_loop

rb_done:
	VZEROUPPER
	RET

// func gnNormAVX512(xh, out, x *float32, n int, mean, r float64, gm, bt float32)
//
// xh = float32((float64(x) − mean)·r); out = gm·xh + bt.
TEXT ·gnNormAVX512(SB), NOSPLIT, $0-56
	MOVQ         xh+0(FP), DI
	MOVQ         out+8(FP), R8
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSD mean+32(FP), Z13
	VBROADCASTSD r+40(FP), Z14
	VBROADCASTSS gm+48(FP), Z11
	VBROADCASTSS bt+52(FP), Z12

gn_loop:
	CMPQ         CX, $16
	JL           gn_done
	VCVTPS2PD    (SI), Z0
	VCVTPS2PD    32(SI), Z1
	VSUBPD       Z13, Z0, Z0
	VSUBPD       Z13, Z1, Z1
	VMULPD       Z14, Z0, Z0
	VMULPD       Z14, Z1, Z1
	VCVTPD2PS    Z0, Y0
	VCVTPD2PS    Z1, Y1
	VINSERTF64X4 $1, Y1, Z0, Z0
	VMOVUPS      Z0, (DI)
	VMULPS       Z11, Z0, Z0
	VADDPS       Z12, Z0, Z0
	VMOVUPS      Z0, (R8)
	ADDQ         $64, SI
	ADDQ         $64, DI
	ADDQ         $64, R8
	SUBQ         $16, CX
	JMP          gn_loop

gn_done:
	VZEROUPPER
	RET

// func gnBackAVX512(dx, dy, xh *float32, n int, gm, a, b float32)
//
// dx = ((gm·dy) − a) − (xh·b).
TEXT ·gnBackAVX512(SB), NOSPLIT, $0-44
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), DX
	MOVQ         xh+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSS gm+32(FP), Z13
	VBROADCASTSS a+36(FP), Z14
	VBROADCASTSS b+40(FP), Z15

gb_loop:
	CMPQ    CX, $16
	JL      gb_done
	VMULPS  (DX), Z13, Z0
	VSUBPS  Z14, Z0, Z0
	VMULPS  (SI), Z15, Z1
	VSUBPS  Z1, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DX
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     gb_loop

gb_done:
	VZEROUPPER
	RET

// func addAVX512(dst, a, b *float32, n int)
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

add_loop:
	CMPQ    CX, $16
	JL      add_done
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     add_loop

add_done:
	VZEROUPPER
	RET

// func axpyAVX512(a float32, x, y *float32, n int)
TEXT ·axpyAVX512(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Z15
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX

axpy_loop:
	CMPQ    CX, $16
	JL      axpy_done
	VMULPS  (SI), Z15, Z0
	VADDPS  (DI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     axpy_loop

axpy_done:
	VZEROUPPER
	RET

// func tanhBackAVX512(dx, out, dy *float32, n int)
//
// dx = dy·(1 − out·out).
TEXT ·tanhBackAVX512(SB), NOSPLIT, $0-32
	MOVQ         dx+0(FP), DI
	MOVQ         out+8(FP), SI
	MOVQ         dy+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVL         $0x3f800000, AX
	VPBROADCASTD AX, Z15

tb_loop:
	CMPQ    CX, $16
	JL      tb_done
	VMOVUPS (SI), Z0
	VMULPS  Z0, Z0, Z0
	VSUBPS  Z0, Z15, Z0
	VMULPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     tb_loop

tb_done:
	VZEROUPPER
	RET
