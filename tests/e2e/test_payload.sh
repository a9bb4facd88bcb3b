#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A picture's or a song's own bytes (issue 72): dupscan_payload() (through
# tests/tools/payload) finds one payload in files that independent tools
# tagged differently (exiftool for JPEG, PNG, WebP and HEIC; metaflac for FLAC;
# mutagen for MP3 and M4A), the same payload as in the file those tools stripped of
# every tag, and not in a copy with one byte of the picture or sound
# changed; a file cut short is all payload.
# (on disk: --io=hdd reads the files it finds out of the page cache in the
# disk's order, a path of its own)
ON_DISK=1
. "$(dirname "$0")/../fixtures/lib.sh"
PAYLOAD=${PAYLOAD:?set PAYLOAD to tests/tools/payload}
for tool in exiftool metaflac flac lame cjpeg cwebp heif-enc; do
  command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool (scripts/test installs it)"; exit 0; }
done
# mutagen from Debian's python3-mutagen: the system's python, which may not be
# the first python3 on the path
MPY=
for p in python3 /usr/bin/python3; do "$p" -c 'import mutagen' 2>/dev/null && { MPY=$p; break; }; done
[ -n "$MPY" ] || { echo "1..0 # SKIP no python3-mutagen"; exit 0; }

# the pictures and the sound, made here: a PPM and a PNG of one gradient,
# a WAV of two tones
python3 - <<'PY'
import math, struct, wave, zlib
w, h = 96, 64
px = bytes((x * 5 + y * 3) % 256 if c == 0 else (x * y) % 256 if c == 1 else (x ^ y) * 4 % 256
           for y in range(h) for x in range(w) for c in range(3))
open("pic.ppm", "wb").write(b"P6 %d %d 255\n" % (w, h) + px)
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
raw = b"".join(b"\0" + px[y * w * 3:(y + 1) * w * 3] for y in range(h))
open("pic.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
s = wave.open("song.wav", "wb"); s.setnchannels(2); s.setsampwidth(2); s.setframerate(44100)
s.writeframes(b"".join(struct.pack("<hh", int(8000 * math.sin(i * 0.05)), int(6000 * math.sin(i * 0.031)))
                       for i in range(44100)))
s.close()
PY
cjpeg -quality 85 pic.ppm > a.jpg && cwebp -quiet pic.png -o a.webp && cp pic.png a.png &&
  heif-enc -q 60 pic.png -o a.heic >/dev/null &&
  flac -s -f song.wav -o a.flac && lame --quiet song.wav a.mp3 && python3 "$SOURCE_ROOT/tests/fixtures/m4a.py" a.m4a ||
  { not_ok "the media files made"; done_testing; }

# b: tagged one way, c: another, s: every tag stripped
tag() { # FORMAT
  case $1 in
    jpg|png|webp|heic)
      cp "a.$1" "b.$1" && exiftool -q -overwrite_original -Artist=Someone -Comment="a comment" -XMP:Title=T \
        -GPSLatitude=48.85 -GPSLatitudeRef=N -Rating=4 "b.$1" &&
      cp "a.$1" "c.$1" && exiftool -q -overwrite_original -Copyright=Other -XMP:Subject=x -Orientation#=6 "c.$1" &&
      cp "b.$1" "s.$1" && exiftool -q -overwrite_original -all= "s.$1" ;;
    flac)
      cp a.flac b.flac && metaflac --set-tag=ARTIST=Someone --set-tag=TITLE=Song --import-picture-from=a.jpg b.flac &&
      cp a.flac c.flac && metaflac --set-tag=ALBUM="$(printf 'x%.0s' $(seq 1 3000))" --add-padding=9000 c.flac &&
      cp b.flac s.flac && metaflac --remove-all --dont-use-padding s.flac ;;
    mp3)
      cp a.mp3 b.mp3 && cp a.mp3 c.mp3 && "$MPY" - <<'PY'
from mutagen.apev2 import APEv2
from mutagen.id3 import APIC, COMM, ID3, TIT2, TPE1
t = ID3(); t.add(TIT2(encoding=3, text="Song")); t.add(TPE1(encoding=3, text="Someone"))
t.add(APIC(encoding=3, mime="image/jpeg", type=3, desc="cover", data=open("a.jpg", "rb").read()))
t.save("b.mp3", v1=2)                      # ID3v2.4 before, ID3v1 after
a = APEv2(); a["Title"] = "Other"; a.save("b.mp3")
t = ID3(); t.add(COMM(encoding=3, lang="eng", desc="", text="x")); t.save("c.mp3", v2_version=3)
import shutil
shutil.copy("b.mp3", "s.mp3")
APEv2("s.mp3").delete("s.mp3")
ID3("s.mp3").delete("s.mp3", delete_v1=True, delete_v2=True)
PY
      ;;
    m4a)
      cp a.m4a b.m4a && cp a.m4a c.m4a && "$MPY" - <<'PY'
import shutil
from mutagen.mp4 import MP4, MP4Cover
m = MP4("b.m4a"); m["\xa9nam"] = ["Song"]; m["\xa9ART"] = ["Someone"]; m.save()
m = MP4("c.m4a"); m["\xa9alb"] = ["x" * 3000]; m["covr"] = [MP4Cover(open("a.jpg", "rb").read(), MP4Cover.FORMAT_JPEG)]; m.save()
shutil.copy("b.m4a", "s.m4a"); MP4("s.m4a").delete()
PY
      ;;
  esac
}
for f in jpg png webp heic flac mp3 m4a; do
  tag "$f" || not_ok "$f: tagged by the tools"
  "$PAYLOAD" "a.$f" > "a.$f.p" 2> "a.$f.e"
  same=1
  for v in b c s; do
    [ -e "$v.$f" ] || continue
    "$PAYLOAD" "$v.$f" > "$v.$f.p" 2> "$v.$f.e" || same=0
    cmp -s "a.$f.p" "$v.$f.p" || { same=0; echo "# $f: $v's payload differs ($(cat "$v.$f.e") against $(cat "a.$f.e"))"; }
    [ "$v" != s ] && cmp -s "a.$f" "$v.$f" && { same=0; echo "# $f: $v not tagged at all"; }
  done
  [ "$same" = 1 ] && [ "$(cut -d' ' -f1 "a.$f.e")" != 0 ] && ok "$f: one payload tagged three ways and stripped ($(cut -d' ' -f1-3 "a.$f.e"))" ||
    not_ok "$f: one payload tagged three ways and stripped"
  # one byte of the picture or sound: in the middle of b's last range
  cp "b.$f" "d.$f"
  last=$(awk '{print $NF}' "b.$f.e")
  at=$(( ${last%+*} + ${last#*+} / 2 ))
  python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x10]))' "d.$f" "$at"
  "$PAYLOAD" "d.$f" > "d.$f.p" 2> "d.$f.e"
  ! cmp -s "a.$f.p" "d.$f.p" && ok "$f: a byte of the content changed, another payload" || not_ok "$f: a byte of the content changed"
done
# cut short: all payload (PNG without IEND, a JPEG without EOI, a FLAC block past the end)
head -c -20 b.png > e.png; head -c -1 b.jpg > e.jpg; head -c 200 b.flac > e.flac
for f in e.png e.jpg e.flac; do
  "$PAYLOAD" "$f" > /dev/null 2> "$f.e"
  [ "$(cut -d' ' -f1-3 "$f.e")" = "0 1 $(stat -c %s "$f")" ] && ok "$f cut short: all payload" || not_ok "$f cut short: all payload ($(cat "$f.e"))"
done

# --ignore-metadata (the mode): a collection of every format, tagged three
# ways and stripped by the tools (one set a format), the copies with a byte
# of content changed (in none), a byte-for-byte copy of a.jpg (the same
# bytes as a.jpg, marked so), the files cut short, a JPEG whose tag claims
# a length past its end, and b.jpg with its comment turned into a picture
# segment (its bytes now payload: no set with b.jpg's payload)
mkdir col
for f in jpg png webp heic flac mp3 m4a; do cp a.$f b.$f c.$f s.$f d.$f col/; done
cp a.jpg col/a2.jpg; cp e.png e.jpg e.flac col/
python3 - <<'PY'
b = bytearray(open("b.jpg", "rb").read())
i = b.index(b"\xff\xfe")                     # b's COM segment
long = bytearray(b); long[i + 2:i + 4] = b"\xff\xf0"; open("col/long.jpg", "wb").write(long)
seg = bytearray(b); seg[i + 1] = 0xdb; open("col/seg.jpg", "wb").write(seg)
PY
run "$DUPSCAN" -r --ignore-metadata -j col
printf '%s' "$out" > mode.json
python3 - mode.json <<'PY' && ok "--ignore-metadata: one set a format, a, b, c and the stripped s (a2.jpg too), nothing else" || not_ok "--ignore-metadata's sets" "$out"
import json, sys
sets = json.load(open(sys.argv[1]))["matchSets"]
got = sorted(sorted(f["filePath"].split("/")[-1] for f in st["fileList"]) for st in sets)
want = sorted(sorted([v + "." + f for v in "abcs"] + (["a2.jpg"] if f == "jpg" else [])) for f in "jpg png webp heic flac mp3 m4a".split())
if got != want:
    print("# got", got); print("# want", want); sys.exit(1)
PY
python3 - mode.json <<'PY' && ok "--ignore-metadata: each set marked (sameBytes false), its groups of bytes those of cmp" || not_ok "--ignore-metadata's marks" "$out"
import hashlib, json, sys
for st in json.load(open(sys.argv[1]))["matchSets"]:
    files = st["fileList"]
    byg = {}
    for f in files:
        byg.setdefault(f["bytesGroup"], set()).add(hashlib.sha256(open(f["filePath"], "rb").read()).hexdigest())
    contents = {hashlib.sha256(open(f["filePath"], "rb").read()).hexdigest() for f in files}
    # one content a group, as many groups as contents
    if st["sameBytes"] or any(len(v) != 1 for v in byg.values()) or len(byg) != len(contents):
        print("# marks", st["sameBytes"], [(f["filePath"], f["bytesGroup"]) for f in files]); sys.exit(1)
    for f in files:
        if f["payloadBytes"] >= f["size"] and f["filePath"].endswith(("b.jpg", "b.flac", "b.mp3")):
            print("# payload not less than the file", f); sys.exit(1)
PY
# each reading mode the same sets and marks: hdd's first pass and sweep, and
# net's requests in flight, read payloads as ssd's reads do
for io in hdd ssd net; do
  [ $io = hdd ] && "$EVICT" col   # (out of the page cache: parsed in disk order)
  "$DUPSCAN" -rq --ignore-metadata --io=$io -j col | python3 -c 'import json, sys
print(sorted(sorted((f["filePath"], f["bytesGroup"]) for f in s["fileList"]) for s in json.load(sys.stdin)["matchSets"]))' > "sets.$io"
done
[ -s sets.hdd ] && cmp -s sets.hdd sets.ssd && cmp -s sets.net sets.ssd && [ "$(python3 -c 'import sys; print(len(eval(open("sets.ssd").read())))')" = 7 ] &&
  ok "--io=hdd, ssd and net: the same 7 sets and marks" || not_ok "reading modes differ" "$(cat sets.hdd)" "$(cat sets.ssd)"
# without the mode: the sets of cmp (here a.jpg and a2.jpg, and what stripping b gave back whole)
run "$DUPSCAN" -rq col
want=$(cd col && md5sum * | sort | awk '{ if ($1 == h) { if (!shown) print "col/" p; print "col/" $2; shown = 1 } else shown = 0; h = $1; p = $2 }' | sort)
[ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | grep . | sort)" = "$want" ] && [ -n "$want" ] && ok "without --ignore-metadata: the byte copies only" || not_ok "plain mode on the collection" "$out" "want: $want"
# the text says which files hold the same bytes
run "$DUPSCAN" -rq --ignore-metadata col
printf '%s\n' "$out" | grep -qx '# the same picture or sound, tags differ: 1 2 | 3 | 4 | 5' &&
  ok "text: the set's groups of the same bytes on a line before it" || not_ok "text marks" "$out"
# CSV: a column of groups
run "$DUPSCAN" -rq --ignore-metadata --format=csv col
[ "$(printf '%s\n' "$out" | head -1)" = "size,hash,count,bytes_groups,files" ] && printf '%s\n' "$out" | grep -q '^[0-9]*,[0-9a-f]*,5,1 1 2 3 4,col/a.jpg,col/a2.jpg,' &&
  ok "csv: bytes_groups" || not_ok "csv marks" "$out"
# -L links only the same bytes: a2.jpg to a.jpg, c2.jpg (c.jpg's copy) to
# c.jpg; the others refused, named, and never journaled
cp -a col lk; cp lk/c.jpg lk/c2.jpg
rm -rf "$XDG_STATE_HOME/dupscan"; run "$DUPSCAN" -rL --ignore-metadata lk
j=$(printf '%s\n' "$err" | sed -n 's/^dupscan: journal of this run: \(.*\) (dupscan --undo=FILE reverses it)$/\1/p')
[ "$(stat -c %i lk/a.jpg)" = "$(stat -c %i lk/a2.jpg)" ] && [ "$(stat -c %i lk/c.jpg)" = "$(stat -c %i lk/c2.jpg)" ] &&
  [ "$(stat -c %h lk/b.jpg)" = 1 ] && [ "$(stat -c %h lk/s.flac)" = 1 ] &&
  printf '%s' "$err" | grep -q "unable to hard link 'lk/b.jpg' -> 'lk/a.jpg': The same picture or sound with other tags: not linked" &&
  [ -n "$j" ] && ! grep -q 'lk/b.jpg' "$j" &&
  [ "$(grep -c '^hardlink' "$j")" = "$(find lk -type f -links +1 -printf '%i\n' | sort | uniq -c | awk '{ n += $1 - 1 } END { print n }')" ] &&
  ok "-L: the byte copies linked among themselves, files of other tags refused with the reason, only the links journaled" ||
  not_ok "-L in the mode" "rc $rc" "$err" "$(cat "$j" 2>/dev/null)"
# -B: refused before a journal line (whatever the filesystem can share)
cp -a col bd; rm -rf "$XDG_STATE_HOME/dupscan"; run "$DUPSCAN" -rB --ignore-metadata bd
j=$(find "$XDG_STATE_HOME/dupscan" -type f 2>/dev/null | head -1)
! grep -q 'bd/b.jpg' "$j" 2>/dev/null && printf '%s' "$err$out" | grep -q "other tags" &&
  ok "-B: files of other tags refused, not journaled" || not_ok "-B in the mode" "rc $rc" "$out" "$err" "$(cat "$j" 2>/dev/null)"
# a rename-saving writer (exiftool) retags the duplicate while -d waits at
# its prompt: its picture is the same, its file is not the one scanned:
# nothing deleted, said
rm -rf rc; mkdir rc; cp a.jpg rc/a.jpg; cp b.jpg rc/b.jpg
rm -f rc.in; mkfifo rc.in
"$DUPSCAN" -rd --ignore-metadata rc < rc.in > rc.out 2> rc.err &
pid=$!
exec 3> rc.in
wait_for rc.out "keep which files?" && exiftool -q -overwrite_original -Artist=Racer rc/b.jpg
( printf '1\n' >&3 ) 2>/dev/null
exec 3>&-
wait "$pid"; st=$?
[ "$st" = 1 ] && [ -e rc/b.jpg ] && [ "$(exiftool -s3 -Artist rc/b.jpg)" = Racer ] && grep -q "rc/b.jpg" rc.err &&
  ok "-d, the duplicate retagged meanwhile by a rename-saving writer: left, named" || not_ok "retag race" "status $st" "$(cat rc.out rc.err)"
# -dN: the tags' loss said on the line of each file deleted that had its own
cp -a col dl; run "$DUPSCAN" -rdN --ignore-metadata dl
[ "$rc" = 0 ] && [ -e dl/a.jpg ] && [ ! -e dl/a2.jpg ] && [ ! -e dl/b.jpg ] && [ -e dl/d.jpg ] && [ -e dl/seg.jpg ] &&
  printf '%s\n' "$out" | grep -qx '   \[-\] dl/b.jpg -- its own tags went with it (the same picture or sound is kept)' &&
  printf '%s\n' "$out" | grep -qx '   \[-\] dl/a2.jpg' &&
  ok "-dN: deleted, the lost tags said" || not_ok "-dN in the mode" "rc $rc" "$out" "$err"
# --keep=most-tags: the file of each set with the most bytes of tags is
# listed first (what -dN keeps), by the JSON's own figures
run "$DUPSCAN" -rq --ignore-metadata --keep=most-tags -j col
printf '%s' "$out" > kept.json
python3 - kept.json <<'PY' && ok "--keep=most-tags: each set's file with the most tags first" || not_ok "--keep=most-tags" "$out"
import json, sys
for st in json.load(open(sys.argv[1]))["matchSets"]:
    tags = [f["size"] - f["payloadBytes"] for f in st["fileList"]]
    if tags[0] != max(tags):
        print("#", [(f["filePath"], t) for f, t in zip(st["fileList"], tags)]); sys.exit(1)
    if max(tags) == min(tags):
        print("# no set whose files differ in their tags' bytes:", st["fileList"]); sys.exit(1)
PY
# the page: each set of other tags says so, each path its group (in a real
# browser, as test_html; once a run)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ] && [ -z "${HTML_TESTED:-}" ]; then
  "$DUPSCAN" -rq --ignore-metadata --format=html col > page.html
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$PWD/profile" \
    --virtual-time-budget=5000 --dump-dom "file://$PWD/page.html" > dom.html 2> /dev/null
  notes=$(grep -o 'class="tags"' dom.html | wc -l)
  groups=$(grep -o '<span class="group"> — group [0-9]*</span>' dom.html | wc -l)
  [ "$notes" = 7 ] && [ "$groups" = 29 ] && ! grep -q 'data-errors=' dom.html &&
    ok "the page: 7 sets of other tags said, 29 paths with their group" || not_ok "the page's marks" "notes $notes, groups $groups"
else
  ok "# SKIP the page: no chromium, or checked in another step"
fi
# refused with what compares whole files or needs every record
for extra in --cache --dirs --max-memory=64M; do
  run "$DUPSCAN" -r --ignore-metadata "$extra" col
  [ "$rc" = 2 ] && [ -z "$out" ] && ok "--ignore-metadata $extra: refused (status 2)" || not_ok "--ignore-metadata $extra" "rc $rc" "$err"
done
done_testing
