#!/usr/bin/env python3
"""Independent verifier of tutor-memory's hash-chained episode log (SQLite).

Written from the documented canonical encodings v1 and v2 (ARCHITECTURE.md,
"The chain hash, byte by byte"), not from the Rust code; Python 3 standard
library only.
tools/chain_vectors.json holds test vectors of the encoding. Usage:

    python3 verify_chain.py PATH.db [--json]

Exit status: 0 every chain intact, 2 some chain broken, 1 usage or IO error.
The database is opened read-only and never written.
"""
import argparse
import hashlib
import json
import os
import sqlite3
import struct
import sys
import urllib.parse

MAGIC = b"tutor-memory/episode/v1"
MAGIC_V2 = b"tutor-memory/episode/v2"
CONTENT_V2 = b"tutor-memory/content/v2"
GENESIS = b"tutor-memory/chain/v1/genesis\0"  # note the trailing NUL byte
REORDER_SEARCH = 1024  # how far a moved row is looked for (as the Rust verifier)
V1_NAMES = ("seq", "kind", "at", "salience", "summary", "text", "concepts", "evidence",
            "data", "external_id", "prev_hash", "hash")
V2_NAMES = V1_NAMES + ("enc", "salt", "digest")
V9_NAMES = V2_NAMES + ("erased_by",)


def columns(names):
    """Each column, then the SQLite type of every column (SQLite keeps whatever
    it is given: a row written behind the store's back may hold another type)."""
    return ", ".join(names) + ", " + ", ".join(f"typeof({n})" for n in names)


# The types a readable row has (salience may be stored as an integer).
TYPES = {"seq": ("integer",), "at": ("integer",), "salience": ("real", "integer"),
         "prev_hash": ("blob",), "hash": ("blob",), "external_id": ("text", "null"),
         "enc": ("integer",), "salt": ("blob", "null"), "digest": ("blob", "null"),
         "erased_by": ("integer", "null")}


def put(b):
    """str(x): u32 big-endian byte length, then the bytes."""
    return struct.pack(">I", len(b)) + b


def genesis_hash(key):
    """prev of seq 1: SHA-256(GENESIS || key), plain concatenation, no length."""
    return hashlib.sha256(GENESIS + key).digest()


def encode_v1(key, seq, kind, at_ms, salience, summary, text, concepts,
              evidence, data, external_id, prev):
    """The canonical encoding v1 (the bytes that are hashed). All text
    arguments are UTF-8 bytes, as stored; prev is 32 raw bytes."""
    out = [put(MAGIC), put(key), put(kind)]
    # 24-byte block: seq u64, at i64 (ms, two's complement), salience as the
    # IEEE-754 bits of an f64 (">d" is exactly the bits as a big-endian u64).
    out.append(put(struct.pack(">Qqd", seq, at_ms, float(salience))))
    out += [put(f) for f in (summary, text, concepts, evidence, data)]
    if external_id is None:
        out.append(put(b"\x00"))                      # 00000001 00
    else:
        out.append(put(b"\x01") + put(external_id))   # 00000001 01, then str(id)
    out.append(prev)  # the previous hash: 32 raw bytes, no length prefix
    return b"".join(out)


def external(external_id):
    if external_id is None:
        return put(b"\x00")                      # 00000001 00
    return put(b"\x01") + put(external_id)       # 00000001 01, then str(id)


def content_digest_v2(salt, summary, text, concepts, evidence, data, external_id):
    """Encoding 2's content digest: the content under the row's salt."""
    out = [put(CONTENT_V2), put(salt)]
    out += [put(f) for f in (summary, text, concepts, evidence, data)]
    out.append(external(external_id))
    return hashlib.sha256(b"".join(out)).digest()


def encode_v2(key, seq, kind, at_ms, salience, digest, prev):
    """Encoding 2's hashed bytes: position, kind, time, salience, digest, prev."""
    return b"".join([put(MAGIC_V2), put(key), put(kind),
                     put(struct.pack(">Qqd", seq, at_ms, float(salience))),
                     put(digest), prev])


def episode_hash(*fields):
    return hashlib.sha256(encode_v1(*fields)).digest()


def as_hash(b):
    """The stored prev_hash as 32 bytes (zero-padded / cut, as the Rust code)."""
    return (b + bytes(32))[:32]


class Row:
    def __init__(self, key, names, r):
        """`r`: the columns `names` (TEXT read as bytes), then their SQLite types."""
        values, types = r[:len(names)], [t.decode() for t in r[len(names):]]
        self.key = key
        self.enc, self.salt, self.digest, self.erased_by = 1, None, None, None
        where = f"seq {values[0]!r}"
        for name, v, t in zip(names, values, types):
            if t not in TYPES.get(name, ("text",)):
                raise ValueError(f"{where}: {name} is {t}, not {'/'.join(TYPES.get(name, ('text',)))}")
            if t == "text":
                try:
                    v.decode("utf-8")      # the stored bytes are hashed as they are
                except UnicodeDecodeError:
                    raise ValueError(f"{where}: {name} is not UTF-8") from None
            setattr(self, name, v)
        self.erased = self.erased_by is not None
        if self.enc not in (1, 2) or (self.enc == 2 and self.salt is None and not self.erased):
            raise ValueError(f"{where}: encoding {self.enc} with salt {self.salt!r}")

    def content_digest(self):
        return content_digest_v2(self.salt, self.summary, self.text, self.concepts,
                                 self.evidence, self.data, self.external_id)

    def erased_ok(self):
        """An erased row holds no content and no salt; a v2 one a 32-byte digest,
        a v1 one none."""
        empty = (self.summary == b"" and self.text == b"" and self.concepts == b"[]"
                 and self.evidence == b"[]" and self.data == b"{}"
                 and self.external_id is None and self.salt is None)
        if self.enc == 2:
            return empty and self.digest is not None and len(self.digest) == 32
        return empty and self.digest is None

    def hash_as(self, seq):
        """This row's hash recomputed as if written at `seq`, after its own prev."""
        if self.erased:
            if self.enc == 2:   # the skeleton over the stored digest
                return hashlib.sha256(encode_v2(self.key, seq, self.kind, self.at, self.salience,
                                                self.digest, as_hash(self.prev_hash))).digest()
            return self.hash    # an erased v1 row: only its links can be checked
        if self.enc == 2:
            return hashlib.sha256(encode_v2(self.key, seq, self.kind, self.at, self.salience,
                                            self.content_digest(),
                                            as_hash(self.prev_hash))).digest()
        return episode_hash(self.key, seq, self.kind, self.at, self.salience,
                            self.summary, self.text, self.concepts, self.evidence,
                            self.data, self.external_id, as_hash(self.prev_hash))


def content_break(db, subject_id, key, row):
    """A row that does not hash to its stored hash: moved (reordered) or edited.
    Candidates: the seq after the row its prev_hash points at, then seq±d."""
    cands = []
    if as_hash(row.prev_hash) == genesis_hash(key):
        cands.append(1)
    else:
        hit = db.execute("SELECT seq FROM episodes WHERE subject_id = ? AND hash = ?",
                         (subject_id, row.prev_hash)).fetchone()
        if hit:
            cands.append(hit[0] + 1)
    for d in range(1, REORDER_SEARCH + 1):
        cands += [row.seq + d, row.seq - d]
    for s in cands:
        if s != row.seq and 0 < s < 2**64 and row.hash_as(s) == row.hash:
            return {"kind": "reordered", "seq": row.seq, "written_as": s}
    return {"kind": "content", "seq": row.seq}


def columns_of(db):
    """The chain columns this database's schema has (older ones lack the v2
    and erasure columns)."""
    have = {c[1] for c in db.execute("PRAGMA table_info(episodes)")}
    have = {h.decode() if isinstance(h, bytes) else h for h in have}
    return V9_NAMES if "erased_by" in have else V2_NAMES if "enc" in have else V1_NAMES


def verify_subject(db, names, subject_id, key):
    """Walks one chain in seq order; returns a report like `verify --json`."""
    prev, expected, brk, erased, seen_v2 = genesis_hash(key), 1, None, 0, False
    cur = db.execute(f"SELECT {columns(names)} FROM episodes WHERE subject_id = ? ORDER BY seq",
                     (subject_id,))
    for r in cur:
        try:
            row = Row(key, names, r)
        except ValueError as e:                 # 0. a row of the wrong types
            seq = r[0] if isinstance(r[0], int) and r[0] > 0 else expected
            brk = {"kind": "unreadable", "seq": seq, "reason": str(e)}
            break
        if row.seq != expected:                 # 1. continuity: 1, 2, 3, ...
            brk = {"kind": "missing_seq", "expected": expected, "found": row.seq}
            break
        if ((row.enc == 1 and seen_v2)              # 2a. never back from v2 to v1
                or (row.erased and not row.erased_ok())):
            brk = {"kind": "content", "seq": row.seq}
            break
        if row.erased and row.hash_as(row.seq) != row.hash:   # erased: no reorder search
            brk = {"kind": "content", "seq": row.seq}
            break
        if (not row.erased and row.enc == 2 and row.digest is not None
                and row.digest != row.content_digest()):
            brk = {"kind": "content", "seq": row.seq}   # 2a. v2: the stored digest
            break
        if row.hash_as(row.seq) != row.hash:    # 2. content (over the stored prev)
            brk = content_break(db, subject_id, key, row)
            break
        if row.prev_hash != prev:               # 3. link to the row before
            brk = {"kind": "link", "seq": row.seq, "expected_prev": prev.hex(),
                   "found_prev": row.prev_hash.hex()}
            break
        prev, expected = row.hash, expected + 1
        erased += row.erased
        seen_v2 = seen_v2 or row.enc == 2
    report = {"subject": key.decode("utf-8", "replace"),
              "state": "broken" if brk else "intact",
              "verified": expected - 1,        # rows verified before the break
              "head_seq": expected - 1,        # last verified (0 = empty chain)
              "head_hash": prev.hex(),         # its hash (genesis when empty)
              "erased": erased}                # erased rows among those verified
    if brk:
        report["first_break"] = brk
    return report


def describe(r):
    if r["state"] == "intact":
        erased = f", {r['erased']} erased" if r["erased"] else ""
        return (f"{r['subject']}: intact, {r['verified']} episodes{erased}, "
                f"head seq {r['head_seq']} {r['head_hash']}")
    b = r["first_break"]
    what = {
        "content": lambda: f"seq {b['seq']}: content hash mismatch (the row was edited)",
        "link": lambda: (f"seq {b['seq']}: broken link (prev_hash {b['found_prev'][:12]}"
                         f", the row before hashes to {b['expected_prev'][:12]})"),
        "missing_seq": lambda: f"seq {b['expected']}: missing (next found is seq {b['found']})",
        "reordered": lambda: f"seq {b['seq']}: reordered (written as seq {b['written_as']})",
        "unreadable": lambda: f"seq {b['seq']}: the row cannot be read as an episode ({b['reason']})",
    }[b["kind"]]()
    return (f"{r['subject']}: BROKEN at {what}; {r['verified']} verified, "
            f"last good seq {r['head_seq']} {r['head_hash']}")


class Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 1, not argparse's default 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(1)


def open_ro(path):
    if not os.path.isfile(path):
        raise OSError(f"no such file: {path}")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    db.text_factory = bytes  # TEXT as its stored bytes, decoded (strictly) by Row
    return db


def main():
    p = Parser(description="Verify tutor-memory episode hash chains (encodings v1 and v2).")
    p.add_argument("db", help="the SQLite store")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    a = p.parse_args()
    try:
        db = open_ro(a.db)
        subjects = [(sid, key.decode("utf-8")) for sid, key in
                    db.execute("SELECT id, key FROM subjects ORDER BY key").fetchall()]
        names = columns_of(db)
        reports = [verify_subject(db, names, sid, key.encode("utf-8")) for sid, key in subjects]
    except (OSError, sqlite3.Error, ValueError, TypeError, AttributeError, struct.error) as e:
        print(f"verify_chain: {a.db}: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
    else:
        for r in reports:
            print(describe(r))
        if not reports:
            print(f"no subjects in {a.db}")
    return 2 if any(r["state"] == "broken" for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
