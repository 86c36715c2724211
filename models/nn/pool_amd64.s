//go:build amd64 && !purego

#include "textflag.h"

// GOMAX sets dst to Go's max(a, b) for float32 lanes: MAXPS gives b when
// the two compare equal or are unordered; equal lanes take a AND b (+0 unless
// both are −0, as Go's max(−0, +0) = +0) and unordered ones a + b (a NaN).
#define GOMAX(a, b, dst, t1, t2) \
	VMAXPS    b, a, dst;      \
	VCMPPS    $0x00, b, a, t1; \
	VANDPS    b, a, t2;       \
	VBLENDVPS t1, t2, dst, dst; \
	VCMPPS    $0x03, b, a, t1; \
	VADDPS    b, a, t2;       \
	VBLENDVPS t1, t2, dst, dst


// func maxPool2S1AVX(y, r0, r1 *float32, n int)
//
// y[j] = max(r0[j], r0[j+1], r1[j], r1[j+1]) for j < n (a multiple of 8):
// one output row of 2×2, stride-1 max-pooling from two input rows (each at
// least n+1 long), eight outputs at a time, without the argmax. GOMAX
// makes NaNs and signed zeros come out as Go's max gives them (a bare
// MAXPS returned −0 for max(−0, +0) and dropped a NaN in its first
// operand).
TEXT ·maxPool2S1AVX(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX

loop:
	CMPQ    CX, $8
	JL      done
	VMOVUPS (SI), Y0
	VMOVUPS 4(SI), Y1
	VMOVUPS (DX), Y2
	VMOVUPS 4(DX), Y3
	GOMAX(Y0, Y1, Y4, Y6, Y7)
	GOMAX(Y2, Y3, Y5, Y6, Y7)
	GOMAX(Y4, Y5, Y0, Y6, Y7)
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop

done:
	VZEROUPPER
	RET

// func maxPool2ArgAVX(y *float32, arg *int32, top, bot *float32, n, w int, idx0 *[8]int32)
//
// Eight outputs at a time of maxPool2Row32 at stride 1 (n a multiple of 8):
// y[j] is the maximum of the window (top[j], top[j+1], bot[j], bot[j+1]) and
// arg[j] its first index in (kh, kw) order, with the same strict compares:
// idx0 holds r0 + 0…7, the index of top[0…7] in the sample.
TEXT ·maxPool2ArgAVX(SB), NOSPLIT, $0-56
	MOVQ         y+0(FP), DI
	MOVQ         arg+8(FP), R8
	MOVQ         top+16(FP), SI
	MOVQ         bot+24(FP), DX
	MOVQ         n+32(FP), CX
	MOVQ         w+40(FP), AX
	MOVQ         idx0+48(FP), BX
	VMOVDQU      (BX), Y10
	MOVQ         $8, R9
	VMOVQ        R9, X9
	VPBROADCASTD X9, Y9
	VMOVQ        AX, X8
	VPBROADCASTD X8, Y8

mp_loop:
	CMPQ    CX, $8
	JL      mp_done
	VMOVUPS (SI), Y0  // a
	VMOVUPS 4(SI), Y1 // b
	VMOVUPS (DX), Y2  // c
	VMOVUPS 4(DX), Y3 // d
	VCMPPS  $0x1e, Y0, Y1, Y4 // b > a
	VPSUBD  Y4, Y10, Y6       // it = j + (b > a)
	VCMPPS  $0x1e, Y2, Y3, Y4 // d > c
	VPADDD  Y8, Y10, Y7
	VPSUBD  Y4, Y7, Y7        // ib = j + w + (d > c)
	GOMAX(Y0, Y1, Y11, Y4, Y5) // vt
	GOMAX(Y2, Y3, Y12, Y4, Y5) // vb
	VCMPPS    $0x1e, Y11, Y12, Y4 // vb > vt
	VBLENDVPS Y4, Y7, Y6, Y6      // it = ib there
	GOMAX(Y11, Y12, Y13, Y4, Y5)
	VMOVUPS Y13, (DI)
	VMOVDQU Y6, (R8)
	VPADDD  Y9, Y10, Y10
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	ADDQ    $32, R8
	SUBQ    $8, CX
	JMP     mp_loop

mp_done:
	VZEROUPPER
	RET

// GOMAX512 is GOMAX with mask registers (AVX-512 has no VBLENDVPS): equal
// lanes take a AND b, unordered ones a + b, the rest MAXPS's result.
#define GOMAX512(a, b, dst) \
	VMAXPS b, a, dst;          \
	VCMPPS $0x00, b, a, K4;    \
	VPANDD b, a, K4, dst;      \
	VCMPPS $0x03, b, a, K5;    \
	VADDPS b, a, K5, dst

// func maxPool2S1AVX512(y, r0, r1 *float32, n int)
//
// maxPool2S1AVX sixteen outputs at a time, and a last n mod 16 under a
// mask (lanes past n are neither read nor written).
TEXT ·maxPool2S1AVX512(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX

loop512:
	CMPQ    CX, $16
	JL      done512
	VMOVUPS (SI), Z0
	VMOVUPS 4(SI), Z1
	VMOVUPS (DX), Z2
	VMOVUPS 4(DX), Z3
	GOMAX512(Z0, Z1, Z4)
	GOMAX512(Z2, Z3, Z5)
	GOMAX512(Z4, Z5, Z0)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     loop512

done512:
	TESTQ     CX, CX
	JZ        ret512
	MOVQ      $1, AX
	SHLXQ     CX, AX, AX
	DECQ      AX
	KMOVW     AX, K6
	VMOVUPS.Z (SI), K6, Z0
	VMOVUPS.Z 4(SI), K6, Z1
	VMOVUPS.Z (DX), K6, Z2
	VMOVUPS.Z 4(DX), K6, Z3
	GOMAX512(Z0, Z1, Z4)
	GOMAX512(Z2, Z3, Z5)
	GOMAX512(Z4, Z5, Z0)
	VMOVUPS   Z0, K6, (DI)

ret512:
	VZEROUPPER
	RET

// func maxPool2ArgAVX512(y *float32, arg *int32, top, bot *float32, n, w int, idx0 *[16]int32)
//
// maxPool2ArgAVX sixteen outputs at a time, the same compares and choices
// lane by lane, and a last n mod 16 under a mask (lanes past n are neither
// read nor written); idx0 holds r0 + 0…15.
TEXT ·maxPool2ArgAVX512(SB), NOSPLIT, $0-56
	MOVQ         y+0(FP), DI
	MOVQ         arg+8(FP), R8
	MOVQ         top+16(FP), SI
	MOVQ         bot+24(FP), DX
	MOVQ         n+32(FP), CX
	MOVQ         w+40(FP), AX
	MOVQ         idx0+48(FP), BX
	VMOVDQU32    (BX), Z10
	MOVL         $16, R9
	VPBROADCASTD R9, Z9
	VPBROADCASTD AX, Z8
	MOVL         $1, R10
	VPBROADCASTD R10, Z15

mp_loop512:
	CMPQ      CX, $16
	JL        mp_done512
	VMOVUPS   (SI), Z0            // a
	VMOVUPS   4(SI), Z1           // b
	VMOVUPS   (DX), Z2            // c
	VMOVUPS   4(DX), Z3           // d
	VCMPPS    $0x1e, Z0, Z1, K1   // b > a
	VMOVDQA32 Z10, Z6
	VPADDD    Z15, Z10, K1, Z6    // it = j + (b > a)
	VCMPPS    $0x1e, Z2, Z3, K2   // d > c
	VPADDD    Z8, Z10, Z7
	VPADDD    Z15, Z7, K2, Z7     // ib = j + w + (d > c)
	GOMAX512(Z0, Z1, Z11)         // vt
	GOMAX512(Z2, Z3, Z12)         // vb
	VCMPPS    $0x1e, Z11, Z12, K3 // vb > vt
	VMOVDQA32 Z7, K3, Z6          // it = ib there
	GOMAX512(Z11, Z12, Z13)
	VMOVUPS   Z13, (DI)
	VMOVDQU32 Z6, (R8)
	VPADDD    Z9, Z10, Z10
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	ADDQ      $64, R8
	SUBQ      $16, CX
	JMP       mp_loop512

mp_done512:
	TESTQ     CX, CX
	JZ        mp_ret512
	MOVQ      $1, AX
	SHLXQ     CX, AX, AX
	DECQ      AX
	KMOVW     AX, K6
	VMOVUPS.Z (SI), K6, Z0
	VMOVUPS.Z 4(SI), K6, Z1
	VMOVUPS.Z (DX), K6, Z2
	VMOVUPS.Z 4(DX), K6, Z3
	VCMPPS    $0x1e, Z0, Z1, K1
	VMOVDQA32 Z10, Z6
	VPADDD    Z15, Z10, K1, Z6
	VCMPPS    $0x1e, Z2, Z3, K2
	VPADDD    Z8, Z10, Z7
	VPADDD    Z15, Z7, K2, Z7
	GOMAX512(Z0, Z1, Z11)
	GOMAX512(Z2, Z3, Z12)
	VCMPPS    $0x1e, Z11, Z12, K3
	VMOVDQA32 Z7, K3, Z6
	GOMAX512(Z11, Z12, Z13)
	VMOVUPS   Z13, K6, (DI)
	VMOVDQU32 Z6, K6, (R8)

mp_ret512:
	VZEROUPPER
	RET

// func maxPool2S1PlaneAVX512(y, x *float32, n, w, rows int)
//
// maxPool2S1AVX512 over the rows of one channel: output row r (n values
// at y + r·n) pools input rows r and r+1 (at x + r·w, w ≥ n+1 values).
TEXT ·maxPool2S1PlaneAVX512(SB), NOSPLIT, $0-40
	MOVQ  y+0(FP), R12
	MOVQ  x+8(FP), R9
	MOVQ  n+16(FP), R10
	MOVQ  w+24(FP), AX
	MOVQ  rows+32(FP), R11
	MOVQ  R10, BX
	ANDQ  $15, BX
	MOVQ  $1, CX
	SHLXQ BX, CX, CX
	DECQ  CX
	KMOVW CX, K6                // tail mask: n mod 16 lanes

pl_row:
	MOVQ R12, DI
	MOVQ R9, SI
	LEAQ (SI)(AX*4), DX
	MOVQ R10, CX

pl_loop:
	CMPQ    CX, $16
	JL      pl_tail
	VMOVUPS (SI), Z0
	VMOVUPS 4(SI), Z1
	VMOVUPS (DX), Z2
	VMOVUPS 4(DX), Z3
	GOMAX512(Z0, Z1, Z4)
	GOMAX512(Z2, Z3, Z5)
	GOMAX512(Z4, Z5, Z0)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     pl_loop

pl_tail:
	TESTQ     CX, CX
	JZ        pl_next
	VMOVUPS.Z (SI), K6, Z0
	VMOVUPS.Z 4(SI), K6, Z1
	VMOVUPS.Z (DX), K6, Z2
	VMOVUPS.Z 4(DX), K6, Z3
	GOMAX512(Z0, Z1, Z4)
	GOMAX512(Z2, Z3, Z5)
	GOMAX512(Z4, Z5, Z0)
	VMOVUPS   Z0, K6, (DI)

pl_next:
	LEAQ (R12)(R10*4), R12
	LEAQ (R9)(AX*4), R9
	DECQ R11
	JNZ  pl_row
	VZEROUPPER
	RET

// func maxPool2ArgPlaneAVX512(y *float32, arg *int32, x *float32, n, w, rows int, idx0 *[16]int32)
//
// maxPool2ArgAVX512 over the rows of one channel: output row r (n values
// at y + r·n, argmaxes at arg + r·n) pools input rows r and r+1 (at
// x + r·w); idx0 holds the first row's r0 + 0…15, each row adds w.
TEXT ·maxPool2ArgPlaneAVX512(SB), NOSPLIT, $0-56
	MOVQ         y+0(FP), R12
	MOVQ         arg+8(FP), R13
	MOVQ         x+16(FP), R9
	MOVQ         n+24(FP), R10
	MOVQ         w+32(FP), AX
	MOVQ         rows+40(FP), R11
	MOVQ         idx0+48(FP), BX
	VMOVDQU32    (BX), Z16
	MOVL         $16, BX
	VPBROADCASTD BX, Z9
	VPBROADCASTD AX, Z8
	MOVL         $1, BX
	VPBROADCASTD BX, Z15
	MOVQ         R10, BX
	ANDQ         $15, BX
	MOVQ         $1, CX
	SHLXQ        BX, CX, CX
	DECQ         CX
	KMOVW        CX, K6         // tail mask: n mod 16 lanes

pa_row:
	MOVQ      R12, DI
	MOVQ      R13, R8
	MOVQ      R9, SI
	LEAQ      (SI)(AX*4), DX
	MOVQ      R10, CX
	VMOVDQA32 Z16, Z10

pa_loop:
	CMPQ      CX, $16
	JL        pa_tail
	VMOVUPS   (SI), Z0            // a
	VMOVUPS   4(SI), Z1           // b
	VMOVUPS   (DX), Z2            // c
	VMOVUPS   4(DX), Z3           // d
	VCMPPS    $0x1e, Z0, Z1, K1   // b > a
	VMOVDQA32 Z10, Z6
	VPADDD    Z15, Z10, K1, Z6    // it = j + (b > a)
	VCMPPS    $0x1e, Z2, Z3, K2   // d > c
	VPADDD    Z8, Z10, Z7
	VPADDD    Z15, Z7, K2, Z7     // ib = j + w + (d > c)
	GOMAX512(Z0, Z1, Z11)         // vt
	GOMAX512(Z2, Z3, Z12)         // vb
	VCMPPS    $0x1e, Z11, Z12, K3 // vb > vt
	VMOVDQA32 Z7, K3, Z6          // it = ib there
	GOMAX512(Z11, Z12, Z13)
	VMOVUPS   Z13, (DI)
	VMOVDQU32 Z6, (R8)
	VPADDD    Z9, Z10, Z10
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	ADDQ      $64, R8
	SUBQ      $16, CX
	JMP       pa_loop

pa_tail:
	TESTQ     CX, CX
	JZ        pa_next
	VMOVUPS.Z (SI), K6, Z0
	VMOVUPS.Z 4(SI), K6, Z1
	VMOVUPS.Z (DX), K6, Z2
	VMOVUPS.Z 4(DX), K6, Z3
	VCMPPS    $0x1e, Z0, Z1, K1
	VMOVDQA32 Z10, Z6
	VPADDD    Z15, Z10, K1, Z6
	VCMPPS    $0x1e, Z2, Z3, K2
	VPADDD    Z8, Z10, Z7
	VPADDD    Z15, Z7, K2, Z7
	GOMAX512(Z0, Z1, Z11)
	GOMAX512(Z2, Z3, Z12)
	VCMPPS    $0x1e, Z11, Z12, K3
	VMOVDQA32 Z7, K3, Z6
	GOMAX512(Z11, Z12, Z13)
	VMOVUPS   Z13, K6, (DI)
	VMOVDQU32 Z6, K6, (R8)

pa_next:
	LEAQ   (R12)(R10*4), R12
	LEAQ   (R13)(R10*4), R13
	LEAQ   (R9)(AX*4), R9
	VPADDD Z8, Z16, Z16
	DECQ   R11
	JNZ    pa_row
	VZEROUPPER
	RET
