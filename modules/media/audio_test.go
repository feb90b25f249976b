package media

import (
	"math"
	"testing"
)

// TestAudioFromMutagen: MP3 (CBR and VBR), FLAC, Ogg Vorbis, Opus and M4A encoded by ffmpeg and
// tagged by mutagen give title, artist, album, year, track and a duration computed from the
// stream headers (3 s of sine).
func TestAudioFromMutagen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name, codec string
		args        []string
	}{
		{"cbr.mp3", "mp3", []string{"-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0"}},
		{"vbr.mp3", "mp3", []string{"-c:a", "libmp3lame", "-q:a", "4"}},
		{"a.flac", "flac", []string{"-c:a", "flac"}},
		{"a.ogg", "vorbis", []string{"-c:a", "libvorbis"}},
		{"a.opus", "opus", []string{"-c:a", "libopus"}},
		{"a.m4a", "", []string{"-c:a", "aac"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := dir + "/" + c.name
			taggedAudio(t, p, c.args...)
			info := extract(t, p, KindAudio)
			f := info.Fields()
			if f["title"] != "Blue in Green" || f["artist"] != "Miles Davis" || f["album"] != "Kind of Blue" ||
				f["year"] != 1959 || f["track"] != 3 || f["genre"] != "Jazz" || f["kind"] != "audio" {
				t.Errorf("tags %v", f)
			}
			if f["date_unix"] != int64(-347155200) { // 1959-01-01
				t.Errorf("date_unix %v", f["date_unix"])
			}
			if d, _ := f["duration"].(float64); math.Abs(d-3) > 0.1 {
				t.Errorf("duration %v, want 3 s", f["duration"])
			}
			if c.codec != "" && f["audio_codec"] != c.codec {
				t.Errorf("codec %v, want %s", f["audio_codec"], c.codec)
			}
		})
	}
}

// TestAudioRawAACAndSoundOnlyVideo: a raw AAC (ADTS) stream gets its duration from its frame
// headers; an .mp4 holding only sound is read by ffprobe and reported as audio.
func TestAudioRawAACAndSoundOnlyVideo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ffmpeg(t, "-f", "lavfi", "-i", "sine=duration=3", "-c:a", "aac", dir+"/a.aac")
	f := extract(t, dir+"/a.aac", KindAudio).Fields()
	if d, _ := f["duration"].(float64); math.Abs(d-3) > 0.1 || f["audio_codec"] != "aac" || f["sample_rate"] != 44100 {
		t.Errorf("aac: %v", f)
	}
	ffmpeg(t, "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "aac", "-metadata", "title=Voice memo", dir+"/memo.mp4")
	f = extract(t, dir+"/memo.mp4", KindVideo).Fields()
	if d, _ := f["duration"].(float64); math.Abs(d-2) > 0.1 || f["kind"] != "audio" || f["title"] != "Voice memo" {
		t.Errorf("sound-only mp4: %v", f)
	}
}
