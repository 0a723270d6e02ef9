package picture

import (
	"testing"

	"github.com/kontermatt/kontermatt/core"
)

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

// BenchmarkTable renders the table with a trick in progress.
func BenchmarkTable(b *testing.B) {
	in := TableInput{View: tableGame(b, -1).View(core.NoSeat), Names: names}
	var size int
	for b.Loop() {
		p, err := Table(in, Dark)
		if err != nil {
			b.Fatal(err)
		}
		size = len(p)
	}
	b.ReportMetric(float64(size), "png-bytes")
}
