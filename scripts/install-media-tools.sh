#!/usr/bin/env bash
# Installs what the media module's tests, demo and benchmark need, when missing: ffmpeg (ffprobe
# reads video; ffmpeg makes audio and video fixtures), exiftool (tags JPEG fixtures; the
# benchmark's reference), python3-mutagen (tags MP3/FLAC/OGG fixtures) and heif-enc (HEIC
# fixtures). The media module itself needs only ffprobe, and only for video.
set -euo pipefail
need=()
command -v ffprobe >/dev/null 2>&1 && command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
command -v exiftool >/dev/null 2>&1 || need+=(libimage-exiftool-perl)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import mutagen' 2>/dev/null || need+=(python3 python3-mutagen)
command -v heif-enc >/dev/null 2>&1 || need+=(libheif-examples)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
ffprobe -version | sed -n 1p
exiftool -ver
/usr/bin/python3 -c 'import mutagen; print("mutagen", mutagen.version_string)'
command -v heif-enc
