package picture

import "testing"

// BenchmarkBoardLongMatch renders the board of a long match: the aim is under 20 ms and 100 KB.
func BenchmarkBoardLongMatch(b *testing.B) {
	in := longMatch()
	for _, th := range []Theme{Light, Dark} {
		b.Run(th.String(), func(b *testing.B) {
			var size int
			for b.Loop() {
				p, err := Board(in, th)
				if err != nil {
					b.Fatal(err)
				}
				size = len(p)
			}
			b.ReportMetric(float64(size), "png-bytes")
		})
	}
}
