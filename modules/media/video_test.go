package media

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/homeindex/homeindex/protocol"
	"github.com/homeindex/homeindex/sdk"
	"github.com/rs/zerolog"
)

// TestVideoFromFFmpeg: MP4, MOV, MKV, WebM and AVI made by ffmpeg give duration, size, codecs
// and the creation date (through ffprobe).
func TestVideoFromFFmpeg(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct{ name, vcodec, acodec string }{
		{"v.mp4", "h264", "aac"},
		{"v.mov", "h264", "aac"},
		{"v.mkv", "h264", "aac"},
		{"v.webm", "vp8", "vorbis"},
		{"v.avi", "mpeg4", "mp3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := dir + "/" + c.name
			args := []string{"-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
				"-metadata", "creation_time=2019-07-14T13:04:05Z", "-shortest"}
			switch c.vcodec {
			case "h264":
				args = append(args, "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac")
			case "vp8":
				args = append(args, "-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libvorbis")
			case "mpeg4":
				args = append(args, "-c:v", "mpeg4", "-c:a", "libmp3lame")
			}
			ffmpeg(t, append(args, p)...)
			f := extract(t, p, KindVideo).Fields()
			if f["kind"] != "video" || f["width"] != 160 || f["height"] != 120 || f["video_codec"] != c.vcodec || f["audio_codec"] != c.acodec {
				t.Errorf("fields %v", f)
			}
			if d, _ := f["duration"].(float64); math.Abs(d-2) > 0.2 {
				t.Errorf("duration %v, want 2 s", f["duration"])
			}
			if c.name != "v.avi" && f["date"] != "2019-07-14T13:04:05Z" {
				t.Errorf("date %v", f["date"])
			}
		})
	}
}

// job is a job for path as the daemon would queue it.
func testJob(path, typ string, size int64, log *bytes.Buffer) *sdk.Job {
	return &sdk.Job{ID: "0123456789abcdef", Path: path, Log: zerolog.New(log),
		Document: protocol.Document{ID: "0123456789abcdef", Size: size, Type: typ, Paths: protocol.Paths{{Path: path, Mtime: 1}}}}
}

// TestCheckDecidesWithoutReading: Check answers from name, type and size (the files do not
// exist), and without ffprobe declines video with one log line however many it sees.
func TestCheckDecidesWithoutReading(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log bytes.Buffer
	with, without := New(Config{}), &Module{}
	if !with.HasFFprobe() {
		t.Fatal("ffprobe not found: make deps installs it")
	}
	cases := []struct {
		path, typ   string
		size        int64
		want, want2 bool // with ffprobe, without
	}{
		{"/nowhere/IMG_0001.JPG", "", 100, true, true},
		{"/nowhere/scan", "image/png", 100, true, true},
		{"/nowhere/a.heic", "", 100, true, true},
		{"/nowhere/a.dng", "", 100, true, true},
		{"/nowhere/song.flac", "", 100, true, true},
		{"/nowhere/song", "audio/mpeg", 100, true, true},
		{"/nowhere/clip.mkv", "", 100, true, false},
		{"/nowhere/clip", "video/mp4", 100, true, false},
		{"/nowhere/empty.jpg", "image/jpeg", 0, false, false},
		{"/nowhere/notes.txt", "text/plain", 100, false, false},
		{"/nowhere/a.pdf", "application/pdf", 100, false, false},
	}
	for _, c := range cases {
		for i, m := range []*Module{with, without} {
			got, err := m.Check(ctx, testJob(c.path, c.typ, c.size, &log))
			want := c.want
			if i == 1 {
				want = c.want2
			}
			if err != nil || got != want {
				t.Errorf("%s (ffprobe %v): %v, %v; want %v", c.path, i == 0, got, err, want)
			}
		}
	}
	if n := strings.Count(log.String(), "ffprobe not found"); n != 1 {
		t.Errorf("%d log lines about ffprobe, want 1:\n%s", n, log.String())
	}
}
