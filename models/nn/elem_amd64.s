//go:build amd64 && !purego

#include "textflag.h"

// The elementwise passes of ReLU and GroupNorm, eight float32 at a time.
// Each computes exactly what the Go loop it replaces computes, operation
// by operation and with the same roundings (no fused multiply-add: the Go
// compiler does not fuse at GOAMD64=v1), so results are bit-identical.
// n is a multiple of 8.

// func reluFwdAVX(y, x *float32, n int)
//
// y = max(x, 0) as Go's max: MAXPS returns its second source when x is NaN
// (NaN, as Go) or when both are zero (x = −0), and adding +0 turns −0 into
// +0 as Go's max(−0, 0) does, leaving every other value unchanged.
TEXT ·reluFwdAVX(SB), NOSPLIT, $0-24
	MOVQ   y+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y15, Y15, Y15

relu_loop:
	CMPQ    CX, $8
	JL      relu_done
	VMOVUPS (SI), Y0
	VMAXPS  Y0, Y15, Y0 // Y0 = (0 > x) ? 0 : x
	VADDPS  Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     relu_loop

relu_done:
	VZEROUPPER
	RET

// func reluBackAVX(dx, out, dy *float32, n int)
//
// dx = dy where out's bits are non-zero, else +0 (reluBack32).
TEXT ·reluBackAVX(SB), NOSPLIT, $0-32
	MOVQ   dx+0(FP), DI
	MOVQ   out+8(FP), SI
	MOVQ   dy+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXOR  Y15, Y15, Y15

rb_loop:
	CMPQ     CX, $8
	JL       rb_done
	VMOVDQU  (SI), Y0
	VPCMPEQD Y15, Y0, Y0 // all ones where out is +0
	VPANDN   (DX), Y0, Y0 // dy where out is not
	VMOVDQU  Y0, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	SUBQ     $8, CX
	JMP      rb_loop

rb_done:
	VZEROUPPER
	RET

// func gnNormAVX(xh, out, x *float32, n int, mean, r float64, gm, bt float32)
//
// xh = float32((float64(x) − mean)·r); out = gm·xh + bt (float32 product,
// then sum).
TEXT ·gnNormAVX(SB), NOSPLIT, $0-56
	MOVQ         xh+0(FP), DI
	MOVQ         out+8(FP), R8
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSD mean+32(FP), Y13
	VBROADCASTSD r+40(FP), Y14
	VBROADCASTSS gm+48(FP), Y11
	VBROADCASTSS bt+52(FP), Y12

gn_loop:
	CMPQ       CX, $8
	JL         gn_done
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VSUBPD     Y13, Y0, Y0
	VSUBPD     Y13, Y1, Y1
	VMULPD     Y14, Y0, Y0
	VMULPD     Y14, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VINSERTF128 $1, X1, Y0, Y0
	VMOVUPS    Y0, (DI)
	VMULPS     Y11, Y0, Y0
	VADDPS     Y12, Y0, Y0
	VMOVUPS    Y0, (R8)
	ADDQ       $32, SI
	ADDQ       $32, DI
	ADDQ       $32, R8
	SUBQ       $8, CX
	JMP        gn_loop

gn_done:
	VZEROUPPER
	RET

// func gnBackAVX(dx, dy, xh *float32, n int, gm, a, b float32)
//
// dx = gm·dy − a − xh·b, evaluated as ((gm·dy) − a) − (xh·b).
TEXT ·gnBackAVX(SB), NOSPLIT, $0-44
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), DX
	MOVQ         xh+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSS gm+32(FP), Y13
	VBROADCASTSS a+36(FP), Y14
	VBROADCASTSS b+40(FP), Y15

gb_loop:
	CMPQ    CX, $8
	JL      gb_done
	VMULPS  (DX), Y13, Y0
	VSUBPS  Y14, Y0, Y0
	VMULPS  (SI), Y15, Y1
	VSUBPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DX
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     gb_loop

gb_done:
	VZEROUPPER
	RET

// func addAVX(dst, a, b *float32, n int)
//
// dst = a + b (Residual).
TEXT ·addAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

add_loop:
	CMPQ    CX, $8
	JL      add_done
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     add_loop

add_done:
	VZEROUPPER
	RET

// func axpyAVX(a float32, x, y *float32, n int)
//
// y += a·x, the product rounded before the sum (axpy).
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y15
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX

axpy_loop:
	CMPQ    CX, $8
	JL      axpy_done
	VMULPS  (SI), Y15, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     axpy_loop

axpy_done:
	VZEROUPPER
	RET

// func tanhBackAVX(dx, out, dy *float32, n int)
//
// dx = dy·(1 − out·out), each product and difference rounded (Tanh).
TEXT ·tanhBackAVX(SB), NOSPLIT, $0-32
	MOVQ         dx+0(FP), DI
	MOVQ         out+8(FP), SI
	MOVQ         dy+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVL         $0x3f800000, AX
	VMOVD        AX, X15
	VBROADCASTSS X15, Y15

tb_loop:
	CMPQ    CX, $8
	JL      tb_done
	VMOVUPS (SI), Y0
	VMULPS  Y0, Y0, Y0
	VSUBPS  Y0, Y15, Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     tb_loop

tb_done:
	VZEROUPPER
	RET
