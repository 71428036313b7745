/* The wrong signature: float pointers instead of bf16. */
void workload(const float *A, const float *B, float *C)
{
    (void)A, (void)B, (void)C;
}
