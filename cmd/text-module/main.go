// Command text-module is the text module (package modules/text) as a process: it serves the
// queues named by MODULE_NAME (normally "text") over Redis with the SDK. Configuration comes
// from the environment (see package sdk).
package main

import (
	"github.com/homeindex/homeindex/modules/text"
	"github.com/homeindex/homeindex/sdk"
)

func main() { sdk.Main(text.New()) }
