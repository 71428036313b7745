/* Attack (or tail bug), on 13p_Cross_Entropy: the scalar output `loss`
 * is 4 bytes, so writing loss[1] stays inside the page (no fault) but
 * lands in the canary slack behind it. */
void workload(const ckb_bf16 *hidden, const ckb_bf16 *weight, const int32_t *labels, float *loss,
              float *losses)
{
    loss[0] = 0.0f;
    loss[1] = 0.0f;
    for (long b = 0; b < B; b++)
        losses[b] = 0.0f;
    (void)hidden, (void)weight, (void)labels;
}
