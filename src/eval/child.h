/* child.h — the entry point of the sandboxed child (`ckbench __sandbox`). */
#ifndef CKB_CHILD_H
#define CKB_CHILD_H

/* Runs the child side of the protocol (protocol.h); its exit code is 0 when
 * it ended on the parent's QUIT or the parent's disappearance. */
int ckb_child_main(int argc, char **argv);

#endif /* CKB_CHILD_H */
