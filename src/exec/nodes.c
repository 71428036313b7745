/* The nodes an executor's results came from (see exec_priv.h): their
 * tally (what ckb_exec_nodes_json of exec.c reports), and the warning when
 * they differ in CPU. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonget.h"
#include "core/say.h"
#include "exec/exec_priv.h"

void exec__note_node(ckb_exec *x, json_object *json)
{
    json_object *e = ckb_json_obj(json, "executor");
    const char *node = ckb_json_str(e, "node"), *cpu = ckb_json_str(e, "cpu");
    if (!node)
        return;
    if (!cpu)
        cpu = "";
    pthread_mutex_lock(&x->mu);
    int i = 0;
    while (i < x->nnodes && strcmp(x->nodes[i].node, node) != 0)
        i++;
    if (i == x->nnodes && i < EXEC__MAX_NODES) {
        snprintf(x->nodes[i].node, sizeof x->nodes[i].node, "%s", node);
        snprintf(x->nodes[i].cpu, sizeof x->nodes[i].cpu, "%s", cpu);
        x->nnodes++;
        if (!x->first_cpu[0]) {
            snprintf(x->first_cpu, sizeof x->first_cpu, "%s", cpu);
        } else if (strcmp(x->first_cpu, cpu) != 0) {
            /* Each speedup is timed on one node, but a best-of or a geomean
             * over nodes of different CPUs mixes machines: say so. */
            ckb_say("ckbench: warning: node %s has another CPU (%s) than the first node of this "
                    "run (%s): results from different CPUs are being pooled; restrict the "
                    "partition to one kind of node to compare methods (see nodes.json)\n",
                    node, cpu, x->first_cpu);
            x->mixed = 1;
        }
    }
    if (i < x->nnodes)
        x->nodes[i].n++;
    pthread_mutex_unlock(&x->mu);
}
