/*
 * menu.h — the beam search's menu of optimizations (Autocomp's static
 * strategy list), chosen by the workload's tags: general CPU strategies
 * plus those of each category (matmul, attention, conv, norm, ...).
 */
#ifndef CKB_GEN_MENU_H
#define CKB_GEN_MENU_H

#include "workloads/workload.h"

#define CKB_GEN_MENU_MAX 40

/* Fills items[] with the menu for w, numbered from 1 in the prompt; returns
 * the count. Strings are static. */
int ckb_gen_menu(const ckb_workload *w, const char **items, int max);

#endif /* CKB_GEN_MENU_H */
