#include "textflag.h"

// func markAVX2(dst *uint64, src *byte, n int)
// For each of n 64-byte blocks of src, one word of dst: bit k set when byte
// k is below 0x24 or at least 0x80 (a signed comparison with 0x24), or DEL.
TEXT ·markAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ $0x2424242424242424, AX
	MOVQ AX, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x7f7f7f7f7f7f7f7f, AX
	MOVQ AX, X2
	VPBROADCASTQ X2, Y2

loop:
	VMOVDQU (SI), Y3
	VMOVDQU 32(SI), Y4
	VPCMPGTB Y3, Y1, Y5 // 0x24 > byte, signed
	VPCMPEQB Y3, Y2, Y6 // byte == 0x7f
	VPOR Y5, Y6, Y5
	VPCMPGTB Y4, Y1, Y7
	VPCMPEQB Y4, Y2, Y8
	VPOR Y7, Y8, Y7
	VPMOVMSKB Y5, AX
	VPMOVMSKB Y7, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, (DI)
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
