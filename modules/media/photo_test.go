package media

import (
	"context"
	"math"
	"testing"
)

func extract(t *testing.T, path string, kind Kind) *Info {
	t.Helper()
	info, err := New(Config{}).Extract(context.Background(), path, kind)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return info
}

// checkCamera checks the fields exiftool wrote (cameraTags).
func checkCamera(t *testing.T, f map[string]any, geo map[string]any, wantOffset bool) {
	t.Helper()
	if f["camera_make"] != "Canon" || f["camera_model"] != "Canon EOS 5D Mark IV" || f["camera"] != "Canon EOS 5D Mark IV" {
		t.Errorf("camera: %v / %v / %v", f["camera_make"], f["camera_model"], f["camera"])
	}
	if f["lens"] != "EF24-70mm f/2.8L II USM" {
		t.Errorf("lens %v", f["lens"])
	}
	if wantOffset {
		if f["date"] != "2019-07-14T15:04:05+02:00" || f["date_unix"] != int64(1563109445) || f["offset"] != "+02:00" {
			t.Errorf("date %v, unix %v, offset %v", f["date"], f["date_unix"], f["offset"])
		}
	}
	if f["year"] != 2019 || f["month"] != 7 {
		t.Errorf("year %v month %v", f["year"], f["month"])
	}
	if f["orientation"] != 6 {
		t.Errorf("orientation %v", f["orientation"])
	}
	if geo == nil || math.Abs(geo["lat"].(float64)-48.8584) > 1e-4 || math.Abs(geo["lng"].(float64)-2.2945) > 1e-4 {
		t.Errorf("_geo %v", geo)
	}
}

// TestPhotoJPEGFromExiftool: a JPEG tagged by exiftool gives camera, lens, the date taken with
// its offset (RFC 3339, Unix seconds, year, month), orientation, size and _geo.
func TestPhotoJPEGFromExiftool(t *testing.T) {
	t.Parallel()
	p := tempPath(t, "photo.jpg")
	taggedJPEG(t, p)
	res := extract(t, p, KindPhoto).Result()
	f := res.Document[Field].(map[string]any)
	geo, _ := res.Document[GeoField].(map[string]any)
	checkCamera(t, f, geo, true)
	if f["kind"] != "photo" || f["format"] != "jpeg" || f["width"] != 64 || f["height"] != 48 {
		t.Errorf("fields %v", f)
	}
	if res.Content == nil {
		t.Error("no content: the camera should be searchable")
	}
}

// TestPhotoDateWithoutOffset: without OffsetTimeOriginal the wall clock is kept as UTC and no
// offset is claimed.
func TestPhotoDateWithoutOffset(t *testing.T) {
	t.Parallel()
	p := tempPath(t, "photo.jpg")
	plainJPEG(t, p, 16, 16)
	exiftool(t, p, "-Model=Pixel 7", "-DateTimeOriginal=2019:07:01 08:00:00")
	f := extract(t, p, KindPhoto).Fields()
	if f["date"] != "2019-07-01T08:00:00Z" || f["offset"] != nil || f["camera"] != "Pixel 7" {
		t.Errorf("fields %v", f)
	}
}

// TestPhotoOtherFormats: PNG, WebP and TIFF tagged by exiftool, HEIC made by heif-enc from a
// tagged JPEG.
func TestPhotoOtherFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, tagged := dir+"/src.jpg", dir+"/tagged.jpg"
	plainJPEG(t, src, 64, 48) // ffmpeg would apply a tagged JPEG's orientation
	taggedJPEG(t, tagged)
	cases := []struct {
		name, format string
		make         func(string)
	}{
		{"p.png", "png", func(p string) { ffmpeg(t, "-i", src, p); exiftool(t, p, cameraTags...) }},
		{"p.webp", "webp", func(p string) { ffmpeg(t, "-i", src, p); exiftool(t, p, cameraTags...) }},
		{"p.tif", "tiff", func(p string) { ffmpeg(t, "-i", src, p); exiftool(t, p, cameraTags...) }},
		{"p.heic", "heif", func(p string) { run(t, "heif-enc", "-q", "50", "-o", p, tagged) }},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			p := dir + "/" + c.name
			c.make(p)
			res := extract(t, p, KindPhoto).Result()
			f := res.Document[Field].(map[string]any)
			geo, _ := res.Document[GeoField].(map[string]any)
			if f["format"] != c.format || f["width"] != 64 || f["height"] != 48 {
				t.Errorf("format/size: %v", f)
			}
			checkCamera(t, f, geo, true)
		})
	}
}
