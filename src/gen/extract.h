/*
 * extract.h — the kernel inside a model's reply: fenced blocks (```c,
 * ```cpp, ``` and unterminated ones), several of them, prose around, or bare
 * code without a fence; CRLF line ends are made LF.
 */
#ifndef CKB_GEN_EXTRACT_H
#define CKB_GEN_EXTRACT_H

/* The code of the reply: among the fenced C blocks, the last one that
 * defines `entry` (a body follows its parameter list); if none does, the
 * longest C block; without fences, the code from its first line to the end
 * of the last top-level brace when it defines `entry` or includes a header.
 * Returns a malloc'd string the caller frees, or NULL when the reply holds
 * no code (prose only, empty, NULL). */
char *ckb_gen_extract(const char *reply, const char *entry);

/* 1 when text defines a function named entry (not only declares or calls it). */
int ckb_gen_defines(const char *text, const char *entry);

#endif /* CKB_GEN_EXTRACT_H */
