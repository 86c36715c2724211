//go:build amd64 && !purego

#include "textflag.h"

// Lane i of a broadcast mask byte tests bit i.
DATA laneBits<>+0(SB)/4, $1
DATA laneBits<>+4(SB)/4, $2
DATA laneBits<>+8(SB)/4, $4
DATA laneBits<>+12(SB)/4, $8
DATA laneBits<>+16(SB)/4, $16
DATA laneBits<>+20(SB)/4, $32
DATA laneBits<>+24(SB)/4, $64
DATA laneBits<>+28(SB)/4, $128
GLOBL laneBits<>(SB), RODATA|NOPTR, $32

// func addClampedMaskedAVX2(dst, src *float32, words *uint64, nw int, s, c, negc float32)
//
// For each of nw mask words and the 64 coordinates it covers:
// dst[t] += bit t ? min(max(s·src[t], −c), c) : +0, eight lanes at a time.
TEXT ·addClampedMaskedAVX2(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         words+16(FP), DX
	MOVQ         nw+24(FP), CX
	VBROADCASTSS s+32(FP), Y3
	VBROADCASTSS c+36(FP), Y4
	VBROADCASTSS negc+40(FP), Y5
	VMOVDQU      laneBits<>(SB), Y6

word:
	TESTQ CX, CX
	JZ    done
	MOVQ  (DX), R8
	MOVQ  $8, R10

group:
	MOVL         R8, R9
	ANDL         $0xff, R9
	VMOVD        R9, X2
	VPBROADCASTD X2, Y2
	VPAND        Y6, Y2, Y2
	VPCMPEQD     Y6, Y2, Y2
	VMULPS       (SI), Y3, Y0
	VMAXPS       Y5, Y0, Y0
	VMINPS       Y4, Y0, Y0
	VANDPS       Y2, Y0, Y0
	VADDPS       (DI), Y0, Y0
	VMOVUPS      Y0, (DI)
	SHRQ         $8, R8
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         R10
	JNZ          group

	ADDQ $8, DX
	DECQ CX
	JMP  word

done:
	VZEROUPPER
	RET
