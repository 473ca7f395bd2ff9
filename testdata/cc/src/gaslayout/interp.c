/* interp.c: a bytecode interpreter in the style of SQLite's VDBE: one big
   function with a large switch, computed gotos, many locals, calls through
   function pointers, recursion. For TestGasLayoutLive. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { OP_PUSH, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_JMP, OP_JZ, OP_CALL, OP_RET, OP_DUP, OP_SWAP, OP_POP, OP_HALT, OP_CMP, OP_LOAD, OP_STORE };

typedef struct Vm {
	int64_t stack[256];
	int sp;
	int64_t mem[64];
	int64_t (*native[4])(struct Vm *, int64_t);
} Vm;

static int64_t nat_sq(Vm *vm, int64_t x) { (void)vm; return x * x; }
static int64_t nat_neg(Vm *vm, int64_t x) { (void)vm; return -x; }

int64_t run(Vm *vm, const uint8_t *code, size_t n, int depth) {
	size_t pc = 0;
	int64_t a, b;
	if (depth > 8)
		return 0;
	while (pc < n) {
		uint8_t op = code[pc++];
		switch (op) {
		case OP_PUSH: vm->stack[vm->sp++] = (int8_t)code[pc++]; break;
		case OP_ADD: b = vm->stack[--vm->sp]; a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = a + b; break;
		case OP_SUB: b = vm->stack[--vm->sp]; a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = a - b; break;
		case OP_MUL: b = vm->stack[--vm->sp]; a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = a * b; break;
		case OP_DIV: b = vm->stack[--vm->sp]; a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = b ? a / b : 0; break;
		case OP_JMP: pc = code[pc]; break;
		case OP_JZ: pc = vm->stack[--vm->sp] ? pc + 1 : code[pc]; break;
		case OP_CALL: a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = vm->native[code[pc++] & 3](vm, a); break;
		case OP_RET: return vm->sp ? vm->stack[vm->sp - 1] : 0;
		case OP_DUP: vm->stack[vm->sp] = vm->stack[vm->sp - 1]; vm->sp++; break;
		case OP_SWAP: a = vm->stack[vm->sp - 1]; vm->stack[vm->sp - 1] = vm->stack[vm->sp - 2]; vm->stack[vm->sp - 2] = a; break;
		case OP_POP: vm->sp--; break;
		case OP_HALT: return run(vm, code + pc, n - pc, depth + 1);
		case OP_CMP: b = vm->stack[--vm->sp]; a = vm->stack[--vm->sp]; vm->stack[vm->sp++] = (a > b) - (a < b); break;
		case OP_LOAD: vm->stack[vm->sp++] = vm->mem[code[pc++] & 63]; break;
		case OP_STORE: vm->mem[code[pc++] & 63] = vm->stack[--vm->sp]; break;
		default: abort();
		}
	}
	return 0;
}

int64_t threaded(const uint8_t *code, int64_t acc) {
	static void *labels[] = {&&l_inc, &&l_dbl, &&l_end};
	const uint8_t *p = code;
	goto *labels[*p++ % 3];
l_inc:
	acc++;
	goto *labels[*p++ % 3];
l_dbl:
	acc *= 2;
	goto *labels[*p++ % 3];
l_end:
	return acc;
}

Vm *vm_new(void) {
	Vm *vm = calloc(1, sizeof *vm);
	vm->native[0] = nat_sq;
	vm->native[1] = nat_neg;
	vm->native[2] = nat_sq;
	vm->native[3] = nat_neg;
	return vm;
}
