package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// ffprobeOutput is the part of `ffprobe -print_format json -show_format -show_streams` the
// module reads.
type ffprobeOutput struct {
	Streams []struct {
		CodecType    string            `json:"codec_type"`
		CodecName    string            `json:"codec_name"`
		Width        int               `json:"width"`
		Height       int               `json:"height"`
		AvgFrameRate string            `json:"avg_frame_rate"`
		SampleRate   string            `json:"sample_rate"`
		Channels     int               `json:"channels"`
		Duration     string            `json:"duration"`
		Tags         map[string]string `json:"tags"`
		Disposition  struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
	} `json:"streams"`
	Format struct {
		FormatName string            `json:"format_name"`
		Duration   string            `json:"duration"`
		BitRate    string            `json:"bit_rate"`
		Tags       map[string]string `json:"tags"`
	} `json:"format"`
}

// maxProbeOutput bounds what the module reads from ffprobe.
const maxProbeOutput = 4 << 20

// readVideo runs ffprobe on path (headers only: it reads no frame) and keeps duration, size,
// codecs, frame rate and creation date.
func (m *Module) readVideo(ctx context.Context, path string) (*Info, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.ffprobe, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", "--", "file:"+path)
	out, errb := sdk.LimitedBuffer{Max: maxProbeOutput}, sdk.LimitedBuffer{Max: 4096}
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ffprobe: %w", ctx.Err())
		}
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("ffprobe: %s", strings.ReplaceAll(msg, path, "<file>"))
	}
	var p ffprobeOutput
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		return nil, fmt.Errorf("ffprobe output: %w", err)
	}
	info := &Info{Kind: KindVideo, Format: p.Format.FormatName}
	info.Duration, _ = strconv.ParseFloat(p.Format.Duration, 64)
	info.BitRate, _ = strconv.ParseInt(p.Format.BitRate, 10, 64)
	dates := []string{p.Format.Tags["creation_time"], p.Format.Tags["com.apple.quicktime.creationdate"], p.Format.Tags["date"]}
	for _, s := range p.Streams {
		switch {
		case s.CodecType == "video" && s.Disposition.AttachedPic == 0 && info.VideoCodec == "":
			info.VideoCodec, info.Width, info.Height = s.CodecName, s.Width, s.Height
			info.FrameRate = ratio(s.AvgFrameRate)
			if rot, err := strconv.Atoi(s.Tags["rotate"]); err == nil && (rot == 90 || rot == 270 || rot == -90) {
				info.Width, info.Height = info.Height, info.Width
			}
			dates = append(dates, s.Tags["creation_time"])
		case s.CodecType == "audio" && info.AudioCodec == "":
			info.AudioCodec, info.Channels = s.CodecName, s.Channels
			info.SampleRate, _ = strconv.Atoi(s.SampleRate)
		}
		if info.Duration == 0 {
			info.Duration, _ = strconv.ParseFloat(s.Duration, 64)
		}
	}
	switch {
	case info.VideoCodec == "" && info.AudioCodec != "":
		info.Kind = KindAudio // an .mp4 or .webm holding only sound
		info.Album = p.Format.Tags["album"]
	case info.VideoCodec == "":
		return nil, errors.New("no video or audio stream")
	}
	// The QuickTime creation date keeps the camera's offset; creation_time is UTC.
	for _, d := range []string{p.Format.Tags["com.apple.quicktime.creationdate"], p.Format.Tags["creation_time"], p.Format.Tags["date"], dates[len(dates)-1]} {
		if t, off, ok := parseDate(d); ok && t.Year() > 1970 {
			info.Date, info.HasOffset = t, off
			break
		}
	}
	info.Title, info.Artist = p.Format.Tags["title"], p.Format.Tags["artist"]
	return info, nil
}

func ratio(s string) float64 {
	a, b, ok := strings.Cut(s, "/")
	x, err1 := strconv.ParseFloat(a, 64)
	if !ok {
		return x
	}
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil || y == 0 {
		return 0
	}
	return x / y
}
