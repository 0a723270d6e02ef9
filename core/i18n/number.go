package i18n

import (
	"strconv"
	"strings"
)

// Decimal writes x with one decimal as lang writes numbers: 21.4 in English, 21,4 in the others,
// with a true minus sign (−1,2) and never a negative zero.
func Decimal(lang string, x float64) string {
	out := strconv.FormatFloat(x, 'f', 1, 64)
	if out == "-0.0" {
		out = "0.0"
	}
	if lang != "en" {
		out = strings.Replace(out, ".", ",", 1)
	}
	return strings.Replace(out, "-", "−", 1)
}

// Percent writes a whole percentage as lang writes it: 62% in English, 62 % with a no-break
// space in lb and de (Duden, DIN 5008), 62 % with a narrow no-break space in French. The
// catalog's texts write their own percentages the same way (TestPercentSpacing).
func Percent(lang string, n int) string { return T(lang, "number.percent", n) }
