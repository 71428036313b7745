/*
 * prompt.h — the messages a model gets (DESIGN §7): a preamble (the task
 * and the rules the evaluator enforces), the workload (dims, tensors, the
 * signature, the judge and its tolerance, the sizes it is compiled at, the
 * thread budget and the host's roofs, then its shown.md verbatim), optionally the
 * documentation blocks, and per method the previous kernel with the
 * feedback of its evaluation, or a beam step's plan request and plan.
 *
 * Feedback is built from the record's JSON (status and eval object), not
 * from live structures, so that a resumed run rebuilds the same prompts.
 */
#ifndef CKB_GEN_PROMPT_H
#define CKB_GEN_PROMPT_H

#include "core/strbuf.h"
#include "machine/profile.h"
#include "providers/provider.h"
#include "workloads/workload.h"

struct json_object;

/* What every prompt of one workload shares. Strings are borrowed. */
typedef struct {
    const ckb_workload *w;
    ckb_size size;
    int threads;
    const char *reference; /* workloads/<id>/shown.md as embedded (refsrc.h) */
    const char *docs;      /* documentation blocks, or NULL: none in the prompt */
    ckb_machine machine;   /* this host: its facts always, its figures when measured */
    int measured;          /* 1: machine holds a stored profile's figures (roofs) */
    int nseeds;            /* input sets the evaluation checks (0: the evaluator's default) */
    int warmup, iters;     /* its warm-up and timed calls (0: the evaluator's defaults) */
} ckb_gen_task;

/* The machine facts of `threads` for a prompt: the stored profile when it
 * belongs to this CPU (*measured = 1), else what a probe reads (no
 * figures, *measured = 0). Never measures. */
void ckb_gen_machine(int threads, ckb_machine *m, int *measured);

/* A kernel already evaluated: its code (NULL: none yet, start from the
 * reference), the record's status and its eval object (may be NULL). */
typedef struct {
    const char *code;
    const char *status;
    struct json_object *eval;
    int no_code_after; /* 1: the latest reply after this kernel had no code */
    struct json_object *before; /* the eval of the kernel this one was made from (its
                                   parent), or NULL: its medians are shown beside */
} ckb_gen_prev;

#define CKB_GEN_MAX_MSGS 2

/* The messages of one call; the texts are owned (ckb_gen_prompt_free). */
typedef struct {
    ckb_chat_msg msgs[CKB_GEN_MAX_MSGS];
    char *text[CKB_GEN_MAX_MSGS];
    int n;
} ckb_gen_prompt;

void ckb_gen_prompt_free(ckb_gen_prompt *p);

/* best-of-n, and the first turn of a refine chain. */
void ckb_gen_prompt_oneshot(const ckb_gen_task *t, ckb_gen_prompt *p);
/* A refine turn: the previous kernel and its feedback. */
void ckb_gen_prompt_refine(const ckb_gen_task *t, const ckb_gen_prev *prev, ckb_gen_prompt *p);
/* A beam step's plan request: the parent, the menu, "apply exactly one",
 * the phase ("translate"/"optimize") and iteration i of n. */
void ckb_gen_prompt_plan(const ckb_gen_task *t, const ckb_gen_prev *parent, const char *phase,
                         int iter, int niters, ckb_gen_prompt *p);
/* A beam step's implementation request: the parent and the plan. */
void ckb_gen_prompt_implement(const ckb_gen_task *t, const ckb_gen_prev *parent,
                              const char *plan, ckb_gen_prompt *p);

/* The feedback of one evaluated sample (status: the record's status; eval:
 * its evaluation's JSON, may be NULL): the failure with the worst element
 * (for a timed call too: which call), the timing with both medians and
 * their spread or, when the timing was disturbed, that there is no figure,
 * and the profile against m's compute roof (m NULL: no roof is quoted). */
void ckb_gen_feedback(ckb_strbuf *sb, const char *status, struct json_object *eval,
                      const ckb_machine *m);
/* The same with the eval of the kernel this one was made from (NULL: none),
 * whose medians are shown beside this one's. The roof quoted is the one the
 * result was divided by (its "roof"; else made from m, machine/roofline.h).
 * Correct or not, the largest error and the worst element's share of its
 * tolerance (the result's worst_tol_share) are given. */
void ckb_gen_feedback_turn(ckb_strbuf *sb, const char *status, struct json_object *eval,
                           struct json_object *before, const ckb_machine *m);

/* SHA-256 of the messages in order (role, NUL, content, NUL each), as hex. */
void ckb_gen_prompt_sha256(const ckb_gen_prompt *p, char hex[65]);
long ckb_gen_prompt_chars(const ckb_gen_prompt *p);
/* The messages with "=== role ===" headers, for `ckbench prompt`. Caller frees. */
char *ckb_gen_prompt_render(const ckb_gen_prompt *p);

/* The strategy a plan reply chose: the menu entry named by its
 * "STRATEGY: <n>" line (or its first number), else the first line of the
 * reply, trimmed to 200 chars. Caller frees; NULL for a NULL reply. */
char *ckb_gen_plan_strategy(const ckb_workload *w, const char *plan_reply);

#endif /* CKB_GEN_PROMPT_H */
