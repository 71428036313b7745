/* Scripted model replies for the generation tests (12p_RMSNorm). */
#ifndef CKBT_GEN_REPLIES_H
#define CKBT_GEN_REPLIES_H

extern const char ckbt_gen_broken[]; /* a fenced kernel that does not compile */
extern const char ckbt_gen_correct[]; /* a plain port of the reference */
extern const char ckbt_gen_fast[];    /* rows over threads, vectorised */

#endif /* CKBT_GEN_REPLIES_H */
