package main

import "fmt"

// runRows prints CFI row tables (implemented with the cfi package).
func (c *cli) runRows(args []string) int {
	return c.fail("", fmt.Errorf("rows: not implemented yet"))
}
