package examples

import "math/rand/v2"

// words is the vocabulary of randomtextwriter: 1000 distinct pronounceable
// words made from syllables by a fixed pseudo-random sequence, so the list
// is the same in every build.
var words = makeWords(1000)

func makeWords(n int) []string {
	onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "cl", "dr", "fl", "gr", "pl", "st", "tr", "sh", "ch", "th", "qu"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"}
	codas := []string{"", "", "n", "r", "s", "t", "l", "m", "nd", "st", "x", "ng"}
	rng := rand.New(rand.NewPCG(1000, 2026))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		syl := 1 + rng.IntN(3)
		w := ""
		for s := 0; s < syl; s++ {
			w += onsets[rng.IntN(len(onsets))] + vowels[rng.IntN(len(vowels))]
		}
		w += codas[rng.IntN(len(codas))]
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
