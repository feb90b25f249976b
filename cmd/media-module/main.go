// Command media-module is the media module (package modules/media) on the SDK: photo EXIF,
// audio tags and durations, and video through ffprobe when it is installed. FFPROBE names the
// ffprobe binary (default: looked up in PATH); the SDK reads the rest of its configuration from
// the environment (see package sdk).
package main

import (
	"os"

	"github.com/homeindex/homeindex/modules/media"
	"github.com/homeindex/homeindex/sdk"
)

func main() { sdk.Main(media.New(media.Config{FFprobe: os.Getenv("FFPROBE")})) }
