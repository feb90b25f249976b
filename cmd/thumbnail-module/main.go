// Command thumbnail-module is the thumbnail module (package modules/thumbnail) on the SDK: a
// small thumbnail and a preview for photos, PDFs (pdftoppm) and videos (ffmpeg), written to
// METADATA_DIRECTORY/by-id/<id>/thumbnail/. Configuration comes from the environment (see
// package sdk).
package main

import (
	"github.com/homeindex/homeindex/modules/thumbnail"
	"github.com/homeindex/homeindex/sdk"
)

func main() { sdk.Main(thumbnail.New(thumbnail.Config{})) }
