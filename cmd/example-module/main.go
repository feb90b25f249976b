// Command example-module is the smallest useful module, built on the SDK: it runs
// once per file (version.json remembers), adds note "hello" to the document and indexes
// "hello world". Configuration comes from the environment (see package sdk); with RECORD_FILE
// set, every check and run is also recorded there (package jobrecord, for the end-to-end suite).
package main

import (
	"os"

	"github.com/homeindex/homeindex/cmd/internal/jobrecord"
	"github.com/homeindex/homeindex/sdk"
)

func main() { sdk.Main(jobrecord.Wrap(module{}, os.Getenv)) }
