package predict

// folds splits examples by workflow into k folds for cross-validation on a
// training set; fold i is validation in the i-th returned pair.
func folds(examples []Example, k int, seed uint64) [][2][]Example {
	ids := shuffledWorkflows(examples, seed, 0xf01d)
	fold := map[string]int{}
	for i, id := range ids {
		fold[id] = i % k
	}
	out := make([][2][]Example, k)
	for _, e := range examples {
		f := fold[e.Ctx.WorkflowID]
		for i := range k {
			if i == f {
				out[i][1] = append(out[i][1], e)
			} else {
				out[i][0] = append(out[i][0], e)
			}
		}
	}
	return out
}
