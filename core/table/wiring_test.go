package table_test

import (
	"github.com/kontermatt/kontermatt/core/table"
	"github.com/kontermatt/kontermatt/core/table/tabletest"
)

// The internal tests' harnesses answer every verb, those registered outside the engine too.
func init() { table.WireOutside = tabletest.Wire }
