// Package kernelshape is the part of a reduction kernel generator that
// does not depend on the instruction set: which plans an emitter takes,
// the loop nest around the kernel body and which shape (row or column)
// runs inside it, how far each loop moves each pointer, which pointer
// moves are still pending, and where the lanes of a result vector go.
//
// The emitters (packages amd64 and arm64) supply the instructions
// through the Emitter interface; everything here is plain arithmetic over
// a internal/plan.Plan and never touches the assembler. Two emitters given the
// same plan therefore walk the same loops in the same order, which is
// what lets their tests share one reference.
package kernelshape
