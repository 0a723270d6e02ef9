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
