// Package thumbnail is the thumbnail module: for each photo, PDF or video it writes a small
// thumbnail (Config.SmallSize on the long side, 256 px by default) and a preview
// (Config.PreviewSize, 1280 px) as JPEG files in its metadata directory
// (by-id/<id>/thumbnail/small.jpg and preview.jpg) and records them in the document under
// "thumbnail".
//
// Photos (JPEG, PNG, GIF's first frame, WebP, TIFF, BMP) are decoded in Go
// (image/*, golang.org/x/image) with their EXIF orientation applied (JPEG and TIFF). A PDF's
// first page is drawn by pdftoppm (poppler-utils) and a video's frame from about 10% in by ffmpeg;
// when those tools are not installed, Check declines those files and says so once in the log.
// HEIC and AVIF are declined: no pure-Go decoder exists for them.
//
// Hostile input is bounded before any pixel is decoded: the header's dimensions are read first
// (image.DecodeConfig) and an image over Config.MaxPixels or Config.MaxDecodedBytes fails
// permanently, naming its size; only the first frame of an animation is decoded; corrupt and
// truncated files fail permanently with the decoder's reason; decoding and external tools stop
// when the job's deadline ends.
package thumbnail
