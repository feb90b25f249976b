package media

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/homeindex/homeindex/sdk"
)

// Info is what the module read from one file. Zero values are left out of the result.
type Info struct {
	Kind Kind

	// Date is when the photo was taken, the recording made or the video shot; HasOffset tells
	// whether the file gave its UTC offset (without it the wall clock is taken as UTC).
	Date      time.Time
	HasOffset bool
	// Year alone, when that is all a tag gives (audio).
	Year int

	// Photo.
	CameraMake, CameraModel, Lens string
	Width, Height                 int
	Orientation                   int
	HasGeo                        bool
	Lat, Lng                      float64
	Altitude                      float64

	// Audio.
	Title, Artist, Album, AlbumArtist, Genre string
	Track, TrackTotal                        int

	// Audio and video.
	Duration               float64 // seconds
	Format                 string  // container or codec family: "jpeg", "mp3", "flac", "matroska,webm", ...
	VideoCodec, AudioCodec string
	SampleRate, Channels   int
	FrameRate              float64
	BitRate                int64
}

// Camera is make and model as one label ("Canon Canon EOS 5D" becomes "Canon EOS 5D").
func (i *Info) Camera() string {
	mk, md := strings.TrimSpace(i.CameraMake), strings.TrimSpace(i.CameraModel)
	switch {
	case mk == "":
		return md
	case md == "":
		return mk
	case strings.HasPrefix(strings.ToLower(md), strings.ToLower(strings.Fields(mk)[0])):
		return md
	}
	return mk + " " + md
}

// Fields returns the "media" object: every date as RFC 3339 text ("date"), Unix seconds
// ("date_unix"), year and month, so range filters and sorts need no parsing.
func (i *Info) Fields() map[string]any {
	f := map[string]any{"kind": string(i.Kind)}
	put := func(k string, v any) {
		switch x := v.(type) {
		case string:
			if x = strings.TrimSpace(strings.ToValidUTF8(x, "")); x != "" {
				f[k] = x
			}
		case int:
			if x != 0 {
				f[k] = x
			}
		case int64:
			if x != 0 {
				f[k] = x
			}
		case float64:
			if x != 0 && !math.IsNaN(x) && !math.IsInf(x, 0) {
				f[k] = x
			}
		}
	}
	if !i.Date.IsZero() && i.Date.Year() > 1 {
		d := i.Date
		if !i.HasOffset {
			d = time.Date(d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second(), d.Nanosecond(), time.UTC)
		}
		f["date"] = d.Format(time.RFC3339)
		f["date_unix"] = d.Unix()
		f["year"] = d.Year()
		f["month"] = int(d.Month())
		if i.HasOffset {
			f["offset"] = d.Format("-07:00")
		}
	} else if i.Year > 0 {
		f["year"] = i.Year
		// The start of the year, so an audio file with a year only still sorts and filters.
		f["date_unix"] = time.Date(i.Year, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	put("format", i.Format)
	put("camera_make", i.CameraMake)
	put("camera_model", i.CameraModel)
	put("camera", i.Camera())
	put("lens", i.Lens)
	put("width", i.Width)
	put("height", i.Height)
	put("orientation", i.Orientation)
	if i.HasGeo {
		put("altitude", round(i.Altitude, 2))
	}
	put("title", i.Title)
	put("artist", i.Artist)
	put("album", i.Album)
	put("album_artist", i.AlbumArtist)
	put("genre", i.Genre)
	put("track", i.Track)
	put("track_total", i.TrackTotal)
	put("duration", round(i.Duration, 3))
	put("video_codec", i.VideoCodec)
	put("audio_codec", i.AudioCodec)
	put("sample_rate", i.SampleRate)
	put("channels", i.Channels)
	put("frame_rate", round(i.FrameRate, 3))
	put("bit_rate", i.BitRate)
	return f
}

// Text is the searchable text: the labels a person would type (camera, lens, title, artist,
// album), one per line.
func (i *Info) Text() string {
	var parts []string
	for _, s := range []string{i.Camera(), i.Lens, i.Title, i.Artist, i.Album, i.AlbumArtist, i.Genre} {
		if s = strings.TrimSpace(strings.ToValidUTF8(s, "")); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// Result is the module's answer: "media", "_geo" when the file has a position, and the labels
// as content.
func (i *Info) Result() sdk.Result {
	doc := map[string]any{Field: i.Fields()}
	if i.HasGeo {
		doc[GeoField] = map[string]any{"lat": round(i.Lat, 7), "lng": round(i.Lng, 7)}
	}
	res := sdk.Result{Document: doc}
	if t := i.Text(); t != "" {
		res.Content = sdk.Text(t)
	}
	return res
}

// validGeo reports whether lat, lng is a position Meilisearch accepts (and not the 0,0 that
// empty GPS tags decode to).
func validGeo(lat, lng float64) bool {
	if math.IsNaN(lat) || math.IsNaN(lng) || lat < -90 || lat > 90 || lng < -180 || lng > 180 {
		return false
	}
	return lat != 0 || lng != 0
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// parseDate reads the date forms tags use: RFC 3339, "2006-01-02 15:04:05", EXIF's
// "2006:01:02 15:04:05", a date alone, a year-month, a year. hasOffset tells whether the text
// carried an offset.
func parseDate(s string) (t time.Time, hasOffset bool, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05Z07:00", "2006:01:02 15:04:05Z07:00"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, true, true
		}
	}
	for _, l := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05", "2006:01:02 15:04:05", "2006-01-02T15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, false, true
		}
	}
	return time.Time{}, false, false
}

func (k Kind) String() string {
	if k == KindNone {
		return "file"
	}
	return string(k)
}

var _ fmt.Stringer = KindNone
