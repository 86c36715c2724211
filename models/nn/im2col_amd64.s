//go:build amd64 && !purego

#include "textflag.h"

// The stride-2 rows of im2col and col2im (see im2col_amd64.go). A row of
// ow ≤ 16 outputs reads 2·ow−1 consecutive inputs: two masked loads (the
// masked-off lanes are never touched, so nothing past the row is read or
// written) and one permute replace ow indirect loads. Only moves, and in
// the scatter one float32 addition per entry (dst + src, as the Go loop
// adds), so results equal the Go loops' bit for bit.

// Lane j of even<> is 2j: the even lanes of the 32-lane pair of tables.
DATA even<>+0(SB)/4, $0
DATA even<>+4(SB)/4, $2
DATA even<>+8(SB)/4, $4
DATA even<>+12(SB)/4, $6
DATA even<>+16(SB)/4, $8
DATA even<>+20(SB)/4, $10
DATA even<>+24(SB)/4, $12
DATA even<>+28(SB)/4, $14
DATA even<>+32(SB)/4, $16
DATA even<>+36(SB)/4, $18
DATA even<>+40(SB)/4, $20
DATA even<>+44(SB)/4, $22
DATA even<>+48(SB)/4, $24
DATA even<>+52(SB)/4, $26
DATA even<>+56(SB)/4, $28
DATA even<>+60(SB)/4, $30
GLOBL even<>(SB), RODATA|NOPTR, $64

// Lane i of halves<> is i/2, then 8 + i/2: each source value twice, for
// the low and the high 16 lanes of a 32-lane row.
DATA halves<>+0(SB)/4, $0
DATA halves<>+4(SB)/4, $0
DATA halves<>+8(SB)/4, $1
DATA halves<>+12(SB)/4, $1
DATA halves<>+16(SB)/4, $2
DATA halves<>+20(SB)/4, $2
DATA halves<>+24(SB)/4, $3
DATA halves<>+28(SB)/4, $3
DATA halves<>+32(SB)/4, $4
DATA halves<>+36(SB)/4, $4
DATA halves<>+40(SB)/4, $5
DATA halves<>+44(SB)/4, $5
DATA halves<>+48(SB)/4, $6
DATA halves<>+52(SB)/4, $6
DATA halves<>+56(SB)/4, $7
DATA halves<>+60(SB)/4, $7
DATA halves<>+64(SB)/4, $8
DATA halves<>+68(SB)/4, $8
DATA halves<>+72(SB)/4, $9
DATA halves<>+76(SB)/4, $9
DATA halves<>+80(SB)/4, $10
DATA halves<>+84(SB)/4, $10
DATA halves<>+88(SB)/4, $11
DATA halves<>+92(SB)/4, $11
DATA halves<>+96(SB)/4, $12
DATA halves<>+100(SB)/4, $12
DATA halves<>+104(SB)/4, $13
DATA halves<>+108(SB)/4, $13
DATA halves<>+112(SB)/4, $14
DATA halves<>+116(SB)/4, $14
DATA halves<>+120(SB)/4, $15
DATA halves<>+124(SB)/4, $15
GLOBL halves<>(SB), RODATA|NOPTR, $128

// func gatherS2AVX512(u, x *float32, k, rows, ld, ow, wp int, m0, m1, mo uint64)
//
// The K² taps of one channel: tap (kh, kw) writes row kh·K+kw of u (at
// stride ld), u[t·ld + oh·ow + j] = x[kh·wp + kw + oh·2wp + 2j] for
// oh < rows, j < ow; m0 and m1 mask the 2·ow−1 inputs' low and high 16
// lanes, mo the ow outputs.
TEXT ·gatherS2AVX512(SB), NOSPLIT, $0-80
	MOVQ      m0+56(FP), AX
	KMOVW     AX, K1
	MOVQ      m1+64(FP), AX
	KMOVW     AX, K2
	MOVQ      mo+72(FP), AX
	KMOVW     AX, K3
	VMOVDQU32 even<>(SB), Z2
	MOVQ      u+0(FP), DI
	MOVQ      x+8(FP), SI
	MOVQ      k+16(FP), R10
	MOVQ      ld+32(FP), R12
	SHLQ      $2, R12
	MOVQ      ow+40(FP), AX
	SHLQ      $2, AX
	MOVQ      wp+48(FP), R13
	SHLQ      $2, R13
	LEAQ      (R13)(R13*1), R9 // 2wp floats: one output row down

g_kh:
	MOVQ k+16(FP), R11
	MOVQ SI, BX

g_kw:
	MOVQ BX, R8
	MOVQ DI, DX
	MOVQ rows+24(FP), CX

g_row:
	VMOVUPS.Z (R8), K1, Z0
	VMOVUPS.Z 64(R8), K2, Z1
	VPERMT2PS Z1, Z2, Z0       // Z0[j] = (Z0:Z1)[2j]
	VMOVUPS   Z0, K3, (DX)
	ADDQ      R9, R8
	ADDQ      AX, DX
	DECQ      CX
	JNZ       g_row
	ADDQ      R12, DI
	ADDQ      $4, BX
	DECQ      R11
	JNZ       g_kw
	ADDQ      R13, SI
	DECQ      R10
	JNZ       g_kh
	VZEROUPPER
	RET

// Lane i of iota<> is i (two vectors: lanes 0–15 and 16–31).
DATA iota<>+0(SB)/4, $0
DATA iota<>+4(SB)/4, $1
DATA iota<>+8(SB)/4, $2
DATA iota<>+12(SB)/4, $3
DATA iota<>+16(SB)/4, $4
DATA iota<>+20(SB)/4, $5
DATA iota<>+24(SB)/4, $6
DATA iota<>+28(SB)/4, $7
DATA iota<>+32(SB)/4, $8
DATA iota<>+36(SB)/4, $9
DATA iota<>+40(SB)/4, $10
DATA iota<>+44(SB)/4, $11
DATA iota<>+48(SB)/4, $12
DATA iota<>+52(SB)/4, $13
DATA iota<>+56(SB)/4, $14
DATA iota<>+60(SB)/4, $15
DATA iota<>+64(SB)/4, $16
DATA iota<>+68(SB)/4, $17
DATA iota<>+72(SB)/4, $18
DATA iota<>+76(SB)/4, $19
DATA iota<>+80(SB)/4, $20
DATA iota<>+84(SB)/4, $21
DATA iota<>+88(SB)/4, $22
DATA iota<>+92(SB)/4, $23
DATA iota<>+96(SB)/4, $24
DATA iota<>+100(SB)/4, $25
DATA iota<>+104(SB)/4, $26
DATA iota<>+108(SB)/4, $27
DATA iota<>+112(SB)/4, $28
DATA iota<>+116(SB)/4, $29
DATA iota<>+120(SB)/4, $30
DATA iota<>+124(SB)/4, $31
GLOBL iota<>(SB), RODATA|NOPTR, $128

// func scatterAddS2AVX512(acc, du *float32, k, rows, ld, ow, wp int, m0, m1, ev uint64)
//
// The transpose of gatherS2AVX512: for kh < K, oh < rows, kw < K, j < ow,
// acc[kh·wp + kw + oh·2wp + 2j] += du[(kh·K+kw)·ld + oh·ow + j]. The
// segment of acc one (kh, oh) touches (2·ow−1+K−1 ≤ 32 entries, masks m0
// and m1) is loaded once, receives the K taps' rows in kw order (tap kw's
// entries at lanes kw, kw+2, …: mask ev<<kw, ev having the 2·ow−1 lowest
// even bits), and is stored once. Each entry receives its terms in (kh, kw)
// order, as in the Go loop over taps; the lanes no tap writes are stored
// back unchanged.
TEXT ·scatterAddS2AVX512(SB), NOSPLIT, $0-80
	MOVQ      m0+56(FP), AX
	KMOVW     AX, K1
	MOVQ      m1+64(FP), AX
	KMOVW     AX, K2
	MOVQ      ow+40(FP), AX
	MOVQ      $1, BX
	SHLXQ     AX, BX, BX
	DECQ      BX
	KMOVW     BX, K3              // the ow values of a du row
	VMOVDQU32 iota<>(SB), Z10
	VMOVDQU32 iota<>+64(SB), Z11
	MOVQ      $1, AX
	VPBROADCASTD AX, Z12          // ones, to step the lane offsets
	MOVQ      acc+0(FP), SI
	MOVQ      du+8(FP), DI
	MOVQ      ld+32(FP), R12
	SHLQ      $2, R12
	MOVQ      wp+48(FP), R13
	SHLQ      $2, R13
	MOVQ      k+16(FP), R10

s_kh:
	MOVQ SI, R8                   // acc at (kh, oh = 0)
	MOVQ DI, BX                   // du at tap (kh, 0), row oh = 0
	MOVQ rows+24(FP), CX

s_oh:
	VMOVUPS.Z (R8), K1, Z0
	VMOVUPS.Z 64(R8), K2, Z1
	VMOVDQA32 Z10, Z13            // lane offsets i − kw, kw = 0
	VMOVDQA32 Z11, Z14
	MOVQ      ev+72(FP), AX       // tap mask, shifted left by kw
	MOVQ      BX, DX
	MOVQ      k+16(FP), R11

s_kw:
	KMOVW        AX, K5
	MOVQ         AX, R9
	SHRQ         $16, R9
	KMOVW        R9, K6
	VMOVUPS.Z    (DX), K3, Z6     // du row of tap kw
	VPSRAD       $1, Z13, Z7      // lane i: du index (i − kw)/2
	VPSRAD       $1, Z14, Z8
	VPERMPS      Z6, Z7, Z7
	VPERMPS      Z6, Z8, Z8
	VADDPS       Z7, Z0, K5, Z0   // tap lanes: acc + du
	VADDPS       Z8, Z1, K6, Z1
	VPSUBD       Z12, Z13, Z13
	VPSUBD       Z12, Z14, Z14
	SHLQ         $1, AX
	ADDQ         R12, DX
	DECQ         R11
	JNZ          s_kw
	VMOVUPS      Z0, K1, (R8)
	VMOVUPS      Z1, K2, 64(R8)
	LEAQ         (R8)(R13*2), R8
	MOVQ         ow+40(FP), AX
	LEAQ         (BX)(AX*4), BX   // du at row oh+1
	DECQ         CX
	JNZ          s_oh
	ADDQ         R13, SI
	MOVQ         k+16(FP), AX
	IMULQ        R12, AX
	ADDQ         AX, DI           // du at tap (kh+1, 0)
	DECQ         R10
	JNZ          s_kh
	VZEROUPPER
	RET
