package main

import "fmt"

// runDump prints the .sframe section (implemented with the emit package).
func (c *cli) runDump(args []string) int {
	return c.fail("", fmt.Errorf("dump: not implemented yet"))
}
