// Command media-module is the media module (package modules/media) on the SDK: photo EXIF,
// audio tags and durations, and video through ffprobe when it is installed. FFPROBE names the
// ffprobe binary (default: looked up in PATH); the SDK reads the rest of its configuration from
// the environment (see package sdk).
//
// `media-module inspect FILE...` prints what the module reads from each file, one JSON line
// per file, without Redis or a daemon.
package main

import (
	"context"
	"os"

	"github.com/homeindex/homeindex/modules/media"
	"github.com/homeindex/homeindex/sdk"
)

func main() {
	if sdk.HelpAsked(os.Args[1:]) {
		_ = sdk.PrintHelp(os.Stdout, "media-module [inspect FILE...]",
			"Reads photo EXIF, audio tags and durations, and video through ffprobe. With inspect,\n"+
				"prints what it reads from each FILE as a JSON line, without Redis or a daemon.",
			sdk.EnvVar{Name: media.EnvFFprobe, Meaning: "the ffprobe binary (default: looked up in PATH; without it, videos get no fields)"})
		return
	}
	m := media.New(media.Config{FFprobe: os.Getenv(media.EnvFFprobe)})
	if len(os.Args) > 1 && os.Args[1] == "inspect" {
		os.Exit(m.Inspect(context.Background(), os.Args[2:], os.Stdout))
	}
	sdk.Main(m)
}
