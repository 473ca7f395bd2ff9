package main

import "github.com/sframe-gen/sframe-gen/elfpatch/elfread"

// displayName returns a name as messages print it (elfread.DisplayName).
func displayName(s string) string { return elfread.DisplayName(s) }
