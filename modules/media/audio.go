package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dhowden/tag"
)

// readAudio reads an audio file's tags and computes its duration from the stream headers:
// MP3 (ID3 tags; Xing/Info/VBRI frame counts, else the bit rate), FLAC (STREAMINFO and Vorbis
// comments), Ogg Vorbis and Opus (comment header and the last page's granule position) and
// MP4/M4A (iTunes atoms; the movie header's duration).
func readAudio(r *limitedFile) (*Info, error) {
	head := make([]byte, 12)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	head = head[:n]
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	info := &Info{Kind: KindAudio}
	switch {
	case bytes.HasPrefix(head, []byte("fLaC")):
		info.Format = "flac"
		err = readFLAC(r, info)
	case bytes.HasPrefix(head, []byte("OggS")):
		err = readOgg(r, info)
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		info.Format = "mp4"
		err = readM4A(r, info)
	case isADTS(head):
		info.Format = "aac"
		err = readADTS(r, info)
	default:
		info.Format = "mp3"
		err = readMP3(r, info)
	}
	if err != nil {
		return nil, err
	}
	return info, nil
}

// fromTag copies what dhowden/tag read.
func fromTag(info *Info, m tag.Metadata) {
	info.Title, info.Artist, info.Album, info.AlbumArtist, info.Genre = m.Title(), m.Artist(), m.Album(), m.AlbumArtist(), m.Genre()
	info.Track, info.TrackTotal = m.Track()
	info.Year = m.Year()
	raw := m.Raw()
	for _, k := range []string{"TDRC", "TDOR", "TYER", "\xa9day"} {
		if s, ok := raw[k].(string); ok {
			if t, off, ok := parseDate(s); ok && len(strings.TrimSpace(s)) > 4 {
				info.Date, info.HasOffset = t, off
				break
			}
		}
	}
}

// --- MP3 ---

var (
	mp3Bitrates = [2][3][16]int{ // [MPEG-1, MPEG-2/2.5][layer I, II, III] kbit/s
		{{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320}},
		{{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160}},
	}
	mp3Rates = [4][3]int{{11025, 12000, 8000}, {0, 0, 0}, {22050, 24000, 16000}, {44100, 48000, 32000}} // by version bits
)

// mp3Frame is one MPEG audio frame header.
type mp3Frame struct {
	mpeg1             bool
	layer             int // 1, 2, 3
	bitrate, rate     int
	channels, samples int
	size              int
}

func parseMP3Frame(b []byte) (mp3Frame, bool) {
	if len(b) < 4 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return mp3Frame{}, false
	}
	ver, layerBits := b[1]>>3&3, b[1]>>1&3
	bi, ri, pad := b[2]>>4, b[2]>>2&3, int(b[2]>>1&1)
	if ver == 1 || layerBits == 0 || bi == 0 || bi == 15 || ri == 3 {
		return mp3Frame{}, false
	}
	f := mp3Frame{mpeg1: ver == 3, layer: 4 - int(layerBits)}
	vi := 1
	if f.mpeg1 {
		vi = 0
	}
	f.bitrate = mp3Bitrates[vi][f.layer-1][bi] * 1000
	f.rate = mp3Rates[ver][ri]
	f.channels = 2
	if b[3]>>6 == 3 {
		f.channels = 1
	}
	switch {
	case f.layer == 1:
		f.samples = 384
		f.size = (12*f.bitrate/f.rate + pad) * 4
	case f.layer == 2 || f.mpeg1:
		f.samples = 1152
		f.size = 144*f.bitrate/f.rate + pad
	default:
		f.samples = 576
		f.size = 72*f.bitrate/f.rate + pad
	}
	return f, f.size > 4
}

func readMP3(r *limitedFile, info *Info) error {
	size, err := r.size()
	if err != nil {
		return err
	}
	if m, err := tag.ReadFrom(r); err == nil {
		fromTag(info, m)
	} else if errors.Is(err, errReadLimit) {
		return err
	}
	// The audio starts after the ID3v2 tag (its size is synchsafe, 28 bits).
	var start int64
	var hdr [10]byte
	if _, err := r.ReadAt(hdr[:], 0); err == nil && string(hdr[:3]) == "ID3" {
		start = 10 + int64(hdr[6]&0x7f)<<21 | int64(hdr[7]&0x7f)<<14 | int64(hdr[8]&0x7f)<<7 | int64(hdr[9]&0x7f)
		if hdr[5]&0x10 != 0 {
			start += 10 // footer
		}
	}
	end := size
	var tail [3]byte
	if size >= 128 {
		if _, err := r.ReadAt(tail[:], size-128); err == nil && string(tail[:]) == "TAG" {
			end -= 128
		}
	}
	// Find the first frame: two consecutive valid headers, within 64 KiB of the tag's end.
	buf := make([]byte, 64<<10)
	n, err := r.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	buf = buf[:n]
	for i := 0; i+4 <= len(buf); i++ {
		f, ok := parseMP3Frame(buf[i:])
		if !ok {
			continue
		}
		if i+f.size+4 <= len(buf) {
			if _, ok := parseMP3Frame(buf[i+f.size:]); !ok {
				continue
			}
		}
		info.SampleRate, info.Channels, info.BitRate = f.rate, f.channels, int64(f.bitrate)
		info.AudioCodec = fmt.Sprintf("mp%d", f.layer)
		frames := xingFrames(buf[i:], f)
		if frames > 0 {
			info.Duration = float64(frames) * float64(f.samples) / float64(f.rate)
			if info.Duration > 0 {
				info.BitRate = int64(float64(end-start-int64(i)) * 8 / info.Duration)
			}
		} else {
			info.Duration = float64(end-start-int64(i)) * 8 / float64(f.bitrate)
		}
		return nil
	}
	if info.Title != "" || info.Artist != "" || info.Album != "" {
		return nil // tags without audio frames: still worth the tags
	}
	return errors.New("no MPEG audio frame found")
}

// xingFrames returns the frame count of a Xing/Info or VBRI header in the first frame, 0 when
// there is none.
func xingFrames(b []byte, f mp3Frame) int {
	side := 17 // side information: MPEG-1 stereo 32, mono 17; MPEG-2 stereo 17, mono 9
	switch {
	case f.mpeg1 && f.channels == 2:
		side = 32
	case !f.mpeg1 && f.channels == 1:
		side = 9
	}
	if x := 4 + side; x+12 <= len(b) {
		if tagName := string(b[x : x+4]); (tagName == "Xing" || tagName == "Info") && b[x+7]&1 != 0 {
			return int(binary.BigEndian.Uint32(b[x+8:]))
		}
	}
	if x := 36; x+18 <= len(b) && string(b[x:x+4]) == "VBRI" {
		return int(binary.BigEndian.Uint32(b[x+14:]))
	}
	return 0
}

// --- AAC (ADTS) ---

func isADTS(b []byte) bool { return len(b) >= 2 && b[0] == 0xff && b[1]&0xf6 == 0xf0 }

var adtsRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// readADTS walks a raw AAC stream's frame headers (7 bytes each; no tags) and adds up their
// samples.
func readADTS(r *limitedFile, info *Info) error {
	size, err := r.size()
	if err != nil {
		return err
	}
	var h [7]byte
	var samples int64
	rate := 0
	for off := int64(0); off+7 <= size; {
		if _, err := r.ReadAt(h[:], off); err != nil {
			return err
		}
		if !isADTS(h[:]) {
			break // trailing tags or garbage
		}
		ri := int(h[2] >> 2 & 0xf)
		if ri >= len(adtsRates) {
			return errors.New("adts: bad sample rate index")
		}
		rate = adtsRates[ri]
		info.Channels = int(h[2]&1)<<2 | int(h[3]>>6)
		n := int64(h[3]&3)<<11 | int64(h[4])<<3 | int64(h[5]>>5)
		if n < 7 {
			return errors.New("adts: bad frame length")
		}
		samples += 1024 * int64(h[6]&3+1)
		off += n
	}
	if rate == 0 {
		return errors.New("no ADTS frame found")
	}
	info.AudioCodec, info.SampleRate = "aac", rate
	info.Duration = float64(samples) / float64(rate)
	return nil
}

// --- FLAC ---

// readFLAC walks the metadata blocks: STREAMINFO gives the duration, VORBIS_COMMENT the tags.
// Other blocks (pictures, padding) are skipped by their declared length without being read,
// whatever size they claim.
func readFLAC(r *limitedFile, info *Info) error {
	size, err := r.size()
	if err != nil {
		return err
	}
	var streaminfo bool
	var h [4]byte
	for off := int64(4); off+4 <= size; {
		if _, err := r.ReadAt(h[:], off); err != nil {
			return err
		}
		last, typ := h[0]&0x80 != 0, h[0]&0x7f
		n := int64(h[1])<<16 | int64(h[2])<<8 | int64(h[3])
		off += 4
		switch typ {
		case 0: // STREAMINFO
			if n < 18 {
				return errors.New("flac STREAMINFO too short")
			}
			var b [18]byte
			if _, err := r.ReadAt(b[:], off); err != nil {
				return fmt.Errorf("flac STREAMINFO: %w", err)
			}
			v := binary.BigEndian.Uint64(b[10:])
			rate := int(v >> 44)
			info.SampleRate, info.Channels = rate, int(v>>41&7)+1
			total := v & (1<<36 - 1)
			if rate > 0 {
				info.Duration = float64(total) / float64(rate)
			}
			info.AudioCodec = "flac"
			streaminfo = true
		case 4: // VORBIS_COMMENT
			b := make([]byte, min(n, 1<<20)) // comments past 1 MiB are left unread
			if _, err := r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			applyVorbis(info, b)
		}
		off += n
		if last {
			break
		}
	}
	if !streaminfo {
		return errors.New("flac without STREAMINFO")
	}
	return nil
}

// --- Vorbis comments (FLAC, Ogg Vorbis, Opus) ---

// applyVorbis reads a Vorbis comment block (vendor, count, "KEY=value" strings). A block cut
// short gives the comments before the cut.
func applyVorbis(info *Info, b []byte) {
	next := func() ([]byte, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.LittleEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, false
		}
		s := b[4 : 4+n]
		b = b[4+n:]
		return s, true
	}
	if _, ok := next(); !ok { // vendor
		return
	}
	if len(b) < 4 {
		return
	}
	count := binary.LittleEndian.Uint32(b)
	b = b[4:]
	for range min(count, 10000) {
		c, ok := next()
		if !ok {
			return
		}
		k, v, ok := strings.Cut(string(c), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToUpper(k) {
		case "TITLE":
			info.Title = v
		case "ARTIST":
			info.Artist = v
		case "ALBUM":
			info.Album = v
		case "ALBUMARTIST", "ALBUM ARTIST":
			info.AlbumArtist = v
		case "GENRE":
			info.Genre = v
		case "TRACKNUMBER":
			n, total, _ := strings.Cut(v, "/")
			info.Track, _ = strconv.Atoi(strings.TrimSpace(n))
			if t, err := strconv.Atoi(strings.TrimSpace(total)); err == nil {
				info.TrackTotal = t
			}
		case "TRACKTOTAL", "TOTALTRACKS":
			info.TrackTotal, _ = strconv.Atoi(v)
		case "DATE", "YEAR":
			if t, off, ok := parseDate(v); ok {
				if len(v) > 4 {
					info.Date, info.HasOffset = t, off
				}
				info.Year = t.Year()
			}
		}
	}
}

// --- Ogg ---

// oggPage is one page's header.
type oggPage struct {
	granule  int64
	serial   uint32
	segments []byte
	bodyOff  int64
}

func readOggPage(r io.ReaderAt, off int64) (oggPage, error) {
	var h [27]byte
	if _, err := r.ReadAt(h[:], off); err != nil {
		return oggPage{}, err
	}
	if string(h[:4]) != "OggS" {
		return oggPage{}, fmt.Errorf("no ogg page at %d", off)
	}
	p := oggPage{granule: int64(binary.LittleEndian.Uint64(h[6:])), serial: binary.LittleEndian.Uint32(h[14:])}
	p.segments = make([]byte, h[26])
	if _, err := r.ReadAt(p.segments, off+27); err != nil {
		return oggPage{}, err
	}
	p.bodyOff = off + 27 + int64(h[26])
	return p, nil
}

// oggPackets reads the first n packets of the stream starting at offset 0, each cut at max
// bytes.
func oggPackets(r io.ReaderAt, size int64, n, max int) ([][]byte, uint32, error) {
	var packets [][]byte
	var cur []byte
	var serial uint32
	for off := int64(0); off < size && len(packets) < n; {
		p, err := readOggPage(r, off)
		if err != nil {
			return packets, serial, err
		}
		if off == 0 {
			serial = p.serial
		}
		body := p.bodyOff
		for _, seg := range p.segments {
			if p.serial == serial && len(cur) < max {
				b := make([]byte, min(int(seg), max-len(cur)))
				if _, err := r.ReadAt(b, body); err != nil {
					return packets, serial, err
				}
				cur = append(cur, b...)
			}
			body += int64(seg)
			if seg < 255 && p.serial == serial {
				packets = append(packets, cur)
				cur = nil
				if len(packets) == n {
					break
				}
			}
		}
		off = p.bodyOff
		for _, seg := range p.segments {
			off += int64(seg)
		}
	}
	return packets, serial, nil
}

func readOgg(r *limitedFile, info *Info) error {
	size, err := r.size()
	if err != nil {
		return err
	}
	packets, serial, err := oggPackets(r, size, 2, 1<<20)
	if len(packets) == 0 {
		if err == nil {
			err = errors.New("no ogg packet")
		}
		return err
	}
	var rate, preSkip int
	id := packets[0]
	switch {
	case len(id) >= 16 && string(id[:7]) == "\x01vorbis":
		info.Format, info.AudioCodec = "ogg", "vorbis"
		info.Channels = int(id[11])
		rate = int(binary.LittleEndian.Uint32(id[12:]))
		info.SampleRate = rate
		if br := int32(binary.LittleEndian.Uint32(id[20:])); len(id) >= 24 && br > 0 {
			info.BitRate = int64(br)
		}
	case len(id) >= 19 && string(id[:8]) == "OpusHead":
		info.Format, info.AudioCodec = "ogg", "opus"
		info.Channels = int(id[9])
		preSkip = int(binary.LittleEndian.Uint16(id[10:]))
		info.SampleRate = int(binary.LittleEndian.Uint32(id[12:]))
		rate = 48000 // Opus granule positions count 48 kHz samples
	default:
		return errors.New("ogg stream is neither Vorbis nor Opus")
	}
	if len(packets) > 1 {
		c := packets[1]
		switch {
		case bytes.HasPrefix(c, []byte("\x03vorbis")):
			applyVorbis(info, c[7:])
		case bytes.HasPrefix(c, []byte("OpusTags")):
			applyVorbis(info, c[8:])
		}
	}
	if g := lastGranule(r, size, serial); g > 0 && rate > 0 {
		info.Duration = float64(g-int64(preSkip)) / float64(rate)
	}
	return nil
}

// lastGranule returns the granule position of the stream's last page, from the file's last
// 64 KiB.
func lastGranule(r io.ReaderAt, size int64, serial uint32) int64 {
	n := min(size, 64<<10)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return 0
	}
	for end := len(buf); ; {
		i := bytes.LastIndex(buf[:end], []byte("OggS"))
		if i < 0 {
			return 0
		}
		if i+27 <= len(buf) && binary.LittleEndian.Uint32(buf[i+14:]) == serial {
			if g := int64(binary.LittleEndian.Uint64(buf[i+6:])); g > 0 {
				return g
			}
		}
		end = i
	}
}

// --- MP4 / M4A ---

func readM4A(r *limitedFile, info *Info) error {
	if m, err := tag.ReadAtoms(r); err == nil {
		fromTag(info, m)
	} else if errors.Is(err, errReadLimit) {
		return err
	}
	size, err := r.size()
	if err != nil {
		return err
	}
	var h [8]byte
	for off := int64(0); off+8 <= size; {
		if _, err := r.ReadAt(h[:], off); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(h[:4]))
		hl := int64(8)
		if n == 1 {
			var ext [8]byte
			if _, err := r.ReadAt(ext[:], off+8); err != nil {
				return err
			}
			n, hl = int64(binary.BigEndian.Uint64(ext[:])), 16
		}
		if n == 0 {
			n = size - off
		}
		if n < hl {
			return errors.New("mp4 box shorter than its header")
		}
		if string(h[4:]) == "moov" {
			return readMvhd(r, off+hl, off+n, info)
		}
		off += n
	}
	if info.Title != "" {
		return nil
	}
	return errors.New("mp4 without a movie box")
}

// readMvhd finds the movie header among moov's children and sets the duration.
func readMvhd(r io.ReaderAt, off, end int64, info *Info) error {
	var h [8]byte
	for off+8 <= end {
		if _, err := r.ReadAt(h[:], off); err != nil {
			return err
		}
		n := int64(binary.BigEndian.Uint32(h[:4]))
		if n < 8 {
			return errors.New("bad box size in moov")
		}
		if string(h[4:]) == "mvhd" {
			var b [32]byte
			if _, err := r.ReadAt(b[:], off+8); err != nil {
				return err
			}
			var scale uint32
			var dur uint64
			if b[0] == 1 {
				scale, dur = binary.BigEndian.Uint32(b[20:]), binary.BigEndian.Uint64(b[24:])
			} else {
				scale, dur = binary.BigEndian.Uint32(b[12:]), uint64(binary.BigEndian.Uint32(b[16:]))
			}
			if scale > 0 {
				info.Duration = float64(dur) / float64(scale)
			}
			return nil
		}
		off += n
	}
	return nil
}
