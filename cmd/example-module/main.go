// Command example-module is the specification's example module, built on the SDK: it runs
// once per file (version.json remembers), adds note "hello" to the document and indexes
// "hello world". Configuration comes from the environment (see package sdk).
package main

import "github.com/homeindex/homeindex/sdk"

func main() { sdk.Main(module{}) }
