#!/usr/bin/perl
# Cache::Memcached::RustXS::Zstd, its Perl API, against the zstd command:
# dictionaries trained here and by `zstd --train`, loaded once, twice, in
# conflict or not at all; round trips; frames in both directions (ours read
# by `zstd -d`, zstd's -- checksummed or not, with a dictionary, without a
# content size -- read by decompress); everything decompress must refuse
# with undef (garbage, truncations, corruptions, trailing bytes, a missing
# dictionary with one warning per ID, bombs within a few MB of memory, lying
# sizes); option errors; and, with Test::LeakTrace, no SV leaked.
#
# Without the zstd command the cases that need it skip with the reason; the
# rest runs anyway. Values are the real ones of bench/data/values.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd qw(:all);
use Cache::Memcached::RustXS::Zlib ();
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Peers qw(slurp spew run_filter);
use CMRXTest::Child qw(in_child status_kb);
use CMRXTest::LeakCheck qw(no_leaks leaktrace_missing);

my $TMP   = File::Temp->newdir;    # removed at exit
my $MAGIC = "\x28\xb5\x2f\xfd";
my $DICT_MAGIC = "\x37\xa4\x30\xec";

# Every warning outside warnings_of (which keeps its own): there must be none.
my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };

my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my $NO_ZSTD   = $HAVE_ZSTD ? '' : 'the zstd command is not in PATH';

# ---- helpers ---------------------------------------------------------------

# Runs $code with STDERR sent to /dev/null (zstd's messages on purpose
# failures and small training sets are not the test's output).
sub quietly {
    my ($code) = @_;
    open my $saved, '>&', \*STDERR or die "dup STDERR: $!";
    open STDERR, '>', File::Spec->devnull or die "STDERR: $!";
    my @returned = eval { $code->() };
    my $err = $@;
    open STDERR, '>&', $saved or die "restore STDERR: $!";
    die $err if $err;
    return wantarray ? @returned : $returned[0];
}

# The zstd command on $input (through files: no pipe can deadlock);
# ($exit_status, $stdout).
sub zstd_cmd {
    my ($input, @args) = @_;
    return quietly(sub { run_filter($input, 'zstd', '-q', @args) });
}

# Unsigned little-endian integer of 1, 2, 4 or 8 bytes.
sub uint_le {
    my ($bytes) = @_;
    my $n = 0;
    $n = $n * 256 + ord substr($bytes, $_, 1) for reverse 0 .. length($bytes) - 1;
    return $n;
}

# What the header of a zstd frame says: content size (undef: not stated),
# dictionary ID (0: none), checksum flag, and where the ID and size fields
# are. Nothing when $f does not start with a frame header.
sub header {
    my ($f) = @_;
    return unless length $f >= 6 && substr($f, 0, 4) eq $MAGIC;
    my $fhd = ord substr $f, 4, 1;
    my ($fcs_flag, $single, $did_flag) = ($fhd >> 6, ($fhd >> 5) & 1, $fhd & 3);
    my %h = (checksum => ($fhd >> 2) & 1, did_at => 5 + ($single ? 0 : 1));
    $h{did_len} = (0, 1, 2, 4)[$did_flag];
    $h{dictionary} = $h{did_len} ? uint_le(substr $f, $h{did_at}, $h{did_len}) : 0;
    $h{fcs_at}  = $h{did_at} + $h{did_len};
    $h{fcs_len} = $fcs_flag ? 1 << $fcs_flag : $single ? 1 : 0;
    $h{size} = $h{fcs_len} ? uint_le(substr $f, $h{fcs_at}, $h{fcs_len}) + ($h{fcs_len} == 2 ? 256 : 0)
                           : undef;
    return \%h;
}

# $f with the dictionary ID in its header replaced by $id (same field size).
sub with_dictionary_id {
    my ($f, $id) = @_;
    my $h = header($f) or die 'not a frame';
    die 'no dictionary ID field' unless $h->{did_len};
    substr($f, $h->{did_at}, $h->{did_len}) = substr(pack('V', $id), 0, $h->{did_len});
    return $f;
}

# A zstd frame made by hand: a 128 KiB window, an 8-byte content size when
# `size` is given (whatever the blocks hold: it may lie), no checksum, and
# the blocks: [raw => $bytes] or [rle => $byte, $count] (at most 128 KiB).
sub craft {
    my (%o) = @_;
    my $f = $MAGIC . chr(defined $o{size} ? 0xC0 : 0x00) . chr(7 << 3);
    $f .= pack 'VV', $o{size} & 0xFFFFFFFF, $o{size} >> 32 if defined $o{size};
    my @blocks = @{ $o{blocks} };
    for my $i (0 .. $#blocks) {
        my ($type, $x, $n) = @{ $blocks[$i] };
        my ($code, $size) = $type eq 'raw' ? (0, length $x) : (1, $n);
        $f .= substr(pack('V', ($size << 3) | ($code << 1) | ($i == $#blocks ? 1 : 0)), 0, 3) . $x;
    }
    return $f;
}

# $count bytes of $byte as a crafted frame of RLE blocks.
sub rle_frame {
    my ($byte, $count, %o) = @_;
    my @blocks;
    for (my $left = $count; $left > 0; $left -= 131072) {
        push @blocks, [rle => $byte, $left < 131072 ? $left : 131072];
    }
    return craft(%o, blocks => \@blocks);
}

sub file_of {    # $data in a new file under $TMP; its path
    my ($name, $data) = @_;
    my $path = "$TMP/$name";
    spew($path, $data);
    return $path;
}

# Collects the warnings $code gives; returns them.
sub warnings_of {
    my ($code) = @_;
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    $code->();
    return @w;
}

sub dies_like {
    my ($code, $re, $name) = @_;
    my $ok = eval { $code->(); 1 };
    ok !$ok, "$name: croaks" or return;
    like $@, $re, "... $name: $re";
}

# Like is(), for bytes that may be binary or large: on failure, the
# lengths and where they first differ, not the whole strings.
sub same_bytes {
    my ($got, $want, $name) = @_;
    return 1 if ok defined $got && $got eq $want, $name;
    return diag 'got undef' unless defined $got;
    my $at = 0;
    $at++ while $at < length $got && $at < length $want && substr($got, $at, 1) eq substr($want, $at, 1);
    diag sprintf 'got %d bytes, want %d; they differ from byte %d: %s vs %s', length $got, length $want,
        $at, short_hex(substr $got, $at, 20), short_hex(substr $want, $at, 20);
    return 0;
}

sub short_hex { my $h = unpack 'H*', $_[0]; length $h > 40 ? substr($h, 0, 40) . '...' : $h }

# ---- data ------------------------------------------------------------------

my $corpus = corpus_values('bench/data/values');
my @NPM    = map { $_->[1] } @{ $corpus->{npm} };       # JSON
my @COMPAT = map { $_->[1] } @{ $corpus->{compat} };    # JSON
my @API    = map { $_->[1] } @{ $corpus->{api} };       # HTML
cmp_ok scalar @NPM, '>', 100, 'the corpus has its npm values';
my @VALUES = (@NPM[0 .. 9], @API[0 .. 4]);               # for round trips
my $BIG = join '', @API;                                 # 163 KB of HTML

# ---- train_dictionary ------------------------------------------------------

my $npm_dict = train_dictionary(\@NPM);
is substr($npm_dict, 0, 4), $DICT_MAGIC, 'train_dictionary: a standard zstd dictionary';
cmp_ok length $npm_dict, '<=', 16384, '... of at most 16 KiB by default';
cmp_ok length $npm_dict, '>', 1024, '... and more than 1 KiB';
my $NPM_ID = uint_le(substr $npm_dict, 4, 4);
cmp_ok $NPM_ID, '>=', 32768, "... its ID $NPM_ID is in the header";

my $small = train_dictionary(\@COMPAT, size => 4096);
cmp_ok length $small, '<=', 4096, 'size => 4096: at most 4096 bytes';
isnt uint_le(substr $small, 4, 4), $NPM_ID, '... another dictionary, another ID';

{
    my @tied;
    tie @tied, 'CountingArray', @COMPAT;
    my $d = train_dictionary(\@tied, size => 4096);
    same_bytes $d, $small, 'a tied array of samples trains the same dictionary';
}
my @downgradable = map { my $s = $_; utf8::upgrade($s); $s } @COMPAT;
same_bytes train_dictionary(\@downgradable, size => 4096), $small, 'UTF-8 samples are downgraded';

dies_like sub { train_dictionary('samples') }, qr/must be an array reference/, 'samples not an array';
dies_like sub { train_dictionary(\@NPM, szie => 1) }, qr/unknown option\(s\): szie/, 'unknown option';
dies_like sub { train_dictionary(\@NPM, size => 'big') }, qr/size must be a number of bytes/, 'size not a number';
dies_like sub { train_dictionary(\@NPM, size => -5) }, qr/size must be a number of bytes/, 'negative size';
dies_like sub { train_dictionary([@NPM[0 .. 2]]) }, qr/could not train/, 'three samples';
dies_like sub { train_dictionary([]) }, qr/could not train/, 'no samples';
dies_like sub { train_dictionary(['x', "\x{263a}" x 5, ('y') x 10]) }, qr/Wide character/, 'a wide-character sample';

# ---- training methods, IDs, frame_sizes ----------------------------------------

{
    my @train = @COMPAT[ grep { $_ % 2 == 0 } 0 .. $#COMPAT ];
    my @held  = @COMPAT[ grep { $_ % 2 } 0 .. $#COMPAT ];
    my %stored;
    for my $method (qw(fastcover cover samples)) {
        my ($dict, $used) = train_dictionary_with_parameters(\@train, size => 65536, method => $method,
                                                             level => 9, id => 200);
        cmp_ok length $dict, '<=', 65536, "method $method: at most the size asked";
        is uint_le(substr $dict, 4, 4), 200, "... with the ID asked";
        is $used->{method}, $method, '... and says which method';
        if ($method eq 'samples') {
            is "$used->{k}/$used->{d}", '0/0', '... (no k or d for samples)';
        } else {
            ok $used->{k} >= 50 && ($used->{d} == 6 || $used->{d} == 8), "... and the k ($used->{k}) and d ($used->{d}) found";
        }
        my $sizes = frame_sizes(\@held, level => 9, dictionary => $dict);
        is scalar @$sizes, scalar @held, '... frame_sizes: one size a value';
        my $sum = 0;
        $sum += $_ for @$sizes;
        $stored{$method} = $sum;
    }
    # The samples method, with all of this family's training values (51 KB)
    # fitting, stores less than the others (the Rust docs give the measure).
    cmp_ok $stored{samples}, '<', $stored{$_}, "samples ($stored{samples} B) beats $_ ($stored{$_} B) on few samples"
        for qw(fastcover cover);

    # frame_sizes agrees with compress, for a loaded dictionary with a small
    # ID, and without a dictionary.
    my $dict = train_dictionary(\@train, size => 8192, method => 'samples', level => 9, id => 201);
    my $file = file_of('small-id.dict', $dict);
    is load_dictionary($file), 201, 'a dictionary with ID 201 loads';
    my @frames = map { compress($_, level => 9, dictionary => 201) } @held;
    is_deeply frame_sizes(\@held, level => 9, dictionary => $dict), [ map { length } @frames ],
        'frame_sizes: the lengths compress gives';
    is_deeply frame_sizes(\@held, level => 3), [ map { length compress($_, level => 3) } @held ],
        '... without a dictionary too';
    is header($frames[0])->{dictionary}, 201, 'the frame names ID 201';
    my $wide = train_dictionary(\@train, size => 8192, method => 'samples', level => 9, id => 1 << 20);
    my $wide_sizes = frame_sizes(\@held, level => 9, dictionary => $wide);
    is_deeply [ map { $wide_sizes->[$_] - length $frames[$_] } 0 .. $#held ], [ (3) x @held ],
        'an ID below 256 takes 3 bytes less in every frame than a 4-byte one';
    my @back = grep { my $back = decompress($frames[$_]); !defined $back || $back ne $held[$_] } 0 .. $#held;
    is "@back", '', '... and every frame decompresses';
    SKIP: {
        skip $NO_ZSTD, 1 unless $HAVE_ZSTD;
        my @bad = grep { my ($st, $out) = zstd_cmd($frames[$_], '-d', '-c', '-D', $file); $st != 0 || $out ne $held[$_] }
                  0 .. $#held;
        is "@bad", '', 'zstd -d -D decodes the frames of a dictionary with a 1-byte ID';
    }
    {
        my @tied;
        tie @tied, 'CountingArray', @held;
        is_deeply frame_sizes(\@tied, level => 9, dictionary => $dict), [ map { length } @frames ],
            'frame_sizes of a tied array';
    }

    dies_like sub { train_dictionary(\@train, method => 'best') }, qr/method must be fastcover, cover or samples/,
        'an unknown method';
    dies_like sub { train_dictionary(\@train, method => 'samples', k => 100) }, qr/bad argument/, 'k for samples';
    dies_like sub { train_dictionary(\@train, method => 'cover', d => 7) }, qr/bad argument/, 'd of 7';
    dies_like sub { train_dictionary(\@train, id => -1) }, qr/id must be a whole number/, 'a negative ID';
    dies_like sub { train_dictionary(\@train, id => 2**32) }, qr/bad argument/, 'an ID over 32 bits';
    dies_like sub { train_dictionary_with_parameters([1, 2]) },
        qr/\Atrain_dictionary_with_parameters: zstd could not train/, 'train_dictionary_with_parameters names itself';
    dies_like sub { frame_sizes('values') }, qr/must be an array reference/, 'frame_sizes: values not an array';
    dies_like sub { frame_sizes(\@held, dictionary => 'not one') }, qr/not a zstd dictionary/, 'frame_sizes: not a dictionary';
    dies_like sub { frame_sizes(\@held, level => 23) }, qr/level must be/, 'frame_sizes: level 23';
    dies_like sub { frame_sizes(\@held, dictionry => $dict) }, qr/unknown option/, 'frame_sizes: unknown option';
}

# ---- load_dictionary ---------------------------------------------------------

my $NPM_FILE = file_of('npm.dict', $npm_dict);
is load_dictionary($NPM_FILE), $NPM_ID, 'load_dictionary: our dictionary, its ID';
is load_dictionary($NPM_FILE), $NPM_ID, '... loading the same file again: the same ID';
is load_dictionary(file_of('npm-copy.dict', $npm_dict)), $NPM_ID, '... the same bytes from another file too';

my $API_FILE = file_of('api.dict', train_dictionary(\@API));
my $API_ID   = load_dictionary($API_FILE);
is $API_ID, uint_le(substr slurp($API_FILE), 4, 4), 'a second dictionary (HTML): its own ID';

{
    # The same header (magic, ID), different tables and content.
    my $conflict = substr($npm_dict, 0, 8) . substr(train_dictionary(\@COMPAT), 8);
    my $file = file_of('conflict.dict', $conflict);
    dies_like sub { load_dictionary($file) },
        qr/\Qload_dictionary: $file: a different zstd dictionary with the same ID is loaded (ID $NPM_ID)\E at /,
        'another dictionary with a loaded ID';
    is load_dictionary($NPM_FILE), $NPM_ID, '... and the loaded one stays';
}

{
    my $json = file_of('not.dict', $NPM[0]);
    dies_like sub { load_dictionary($json) }, qr/\Qload_dictionary: $json: not a zstd dictionary\E at /,
        'a JSON file';
    my $frame_file = file_of('frame.dict', compress($NPM[0]));
    dies_like sub { load_dictionary($frame_file) }, qr/not a zstd dictionary/, 'a zstd frame';
    my $zero_id = file_of('zero.dict', substr($npm_dict, 0, 4) . "\0\0\0\0" . substr($npm_dict, 8));
    dies_like sub { load_dictionary($zero_id) }, qr/not a zstd dictionary/, 'a dictionary with ID 0';
    my $bad_tables = file_of('tables.dict', $DICT_MAGIC . pack('V', $NPM_ID ^ 0x5555) . ("\xff" x 200));
    dies_like sub { load_dictionary($bad_tables) }, qr/not a zstd dictionary/, 'magic and ID, then garbage';
    my $empty = file_of('empty.dict', '');
    dies_like sub { load_dictionary($empty) }, qr/not a zstd dictionary/, 'an empty file';
    my $missing = "$TMP/no/such.dict";
    dies_like sub { load_dictionary($missing) }, qr/\Qload_dictionary: cannot open $missing: \E.+ at /,
        'a missing file (the path and why)';
    dies_like sub { load_dictionary($TMP->dirname) }, qr/load_dictionary: (?:cannot (?:open|read) )?\Q$TMP\E/,
        'a directory';
    dies_like sub { load_dictionary() }, qr/the path of a zstd dictionary file is needed/, 'no path';
    dies_like sub { load_dictionary('') }, qr/the path of a zstd dictionary file is needed/, 'an empty path';
}

# A dictionary made by `zstd --train`, and one with a forced, taken ID.
my ($ZSTD_FILE, $ZSTD_ID);
SKIP: {
    skip $NO_ZSTD, 5 unless $HAVE_ZSTD;
    mkdir "$TMP/samples" or die $!;
    my @files = map { file_of("samples/$_", $COMPAT[$_]) } 0 .. $#COMPAT;
    $ZSTD_FILE = "$TMP/zstd.dict";
    is quietly(sub { system('zstd', '-q', '--train', '--maxdict=8192', @files, '-o', $ZSTD_FILE) }), 0,
        'zstd --train';
    my $bytes = slurp($ZSTD_FILE);
    is substr($bytes, 0, 4), $DICT_MAGIC, '... writes a standard dictionary';
    $ZSTD_ID = load_dictionary($ZSTD_FILE);
    is $ZSTD_ID, uint_le(substr $bytes, 4, 4), "load_dictionary of zstd's: the ID of its header ($ZSTD_ID)";

    my $forced = "$TMP/forced.dict";
    quietly(sub { system('zstd', '-q', '--train', '--maxdict=4096', "--dictID=$NPM_ID", @files, '-o', $forced) }) == 0
        or die 'zstd --train --dictID failed';
    dies_like sub { load_dictionary($forced) }, qr/same ID is loaded \(ID $NPM_ID\)/,
        "zstd's dictionary forced to a loaded ID (--dictID)";
}

# ---- compress / decompress round trips ------------------------------------------

{
    my @bad;
    for my $i (0 .. $#VALUES) {
        my $v = $VALUES[$i];
        for my $level (0, 1, 3, 9, 19, -1, -7) {
            for my $id (0, $NPM_ID) {
                my $f = compress($v, level => $level, dictionary => $id);
                my $h = header($f);
                push @bad, "value $i level $level dictionary $id: header"
                    unless $h && $h->{dictionary} == $id && defined $h->{size}
                        && $h->{size} == length $v && !$h->{checksum};
                my $back = decompress($f);
                push @bad, "value $i level $level dictionary $id"
                    unless defined $back && $back eq $v;
            }
        }
    }
    is "@bad", '', 'round trips: 15 values x 7 levels x with and without dictionary '
                 . '(header: the ID, the content size, no checksum)';

    my ($plain, $dict) = (0, 0);
    for my $v (@NPM[0 .. 29]) {
        $plain += length compress($v);
        $dict  += length compress($v, dictionary => $NPM_ID);
    }
    cmp_ok $dict, '<', $plain * 0.8, "the dictionary makes npm values smaller ($dict < $plain bytes)";
    same_bytes compress($NPM[0], level => 0), compress($NPM[0], level => 3), 'level 0 is level 3';
    same_bytes compress($NPM[0]), compress($NPM[0], level => 3, dictionary => 0), 'the defaults: level 3, no dictionary';
    same_bytes compress($NPM[0], level => undef, dictionary => undef), compress($NPM[0]), 'undef options: the defaults';

    my $big = compress($BIG, level => 1);
    same_bytes decompress($big), $BIG, '163 KB round trip';

    for my $case (['', 'empty'], ['x', '1 byte'], ["\0", 'a NUL'], [join('', map chr, 0 .. 255), 'all bytes']) {
        my ($v, $what) = @$case;
        for my $id (0, $NPM_ID) {
            my $f = compress($v, dictionary => $id);
            is substr($f, 0, 4), $MAGIC, "$what, dictionary $id: a zstd frame";
            my $back = decompress($f);
            ok defined $back && $back eq $v, "... that decompresses to the $what input";
        }
    }

    my $frame = compress(undef);
    is decompress($frame), '', 'compress(undef) is the frame of the empty string';
    same_bytes $frame, compress(''), '... the same bytes';
    is decompress(undef), undef, 'decompress(undef) is undef';

    my $s = "caf\xe9 cr\xe8me br\xfbl\xe9e " x 20;
    my $u = $s;
    utf8::upgrade($u);
    ok utf8::is_utf8($u), 'a UTF-8 string of Latin-1 characters';
    same_bytes compress($u), compress($s), '... compresses as its bytes (downgraded)';
    is $u, $s, '... and still holds the same characters';
    my $fu = compress($s);
    utf8::upgrade($fu);
    is decompress($fu), $s, 'a frame in a UTF-8 string is downgraded too';
    dies_like sub { compress("snowman \x{2603}") }, qr/\AWide character in Cache::Memcached::RustXS::Zstd::compress at /,
        'compress of a wide character';
    dies_like sub { decompress("\x{2603}") }, qr/\AWide character in Cache::Memcached::RustXS::Zstd::decompress at /,
        'decompress of a wide character';

    tie my $tied, 'CountingScalar', $NPM[1];
    my $tf = compress($tied, dictionary => $NPM_ID);
    is tied($tied)->{fetches}, 1, 'compress of a tied scalar: one FETCH';
    is decompress($tf), $NPM[1], '... of the right value';
    tie my $tframe, 'CountingScalar', $tf;
    is decompress($tframe), $NPM[1], 'decompress of a tied scalar';
    is tied($tframe)->{fetches}, 1, '... one FETCH';
    tie my $tlevel, 'CountingScalar', 19;
    ok compress($NPM[1], level => $tlevel) eq compress($NPM[1], level => 19), 'a tied level';
    is tied($tlevel)->{fetches}, 1, '... one FETCH';
    tie my $tid, 'CountingScalar', $NPM_ID;
    is header(compress($NPM[1], dictionary => $tid))->{dictionary}, $NPM_ID, 'a tied dictionary ID';
    tie my $tbad, 'CountingScalar', 23;
    dies_like sub { compress('x', level => $tbad) }, qr/level must be/, 'a tied level out of range';
    is decompress(compress(42)), '42', 'a number';
}

# ---- our frames, zstd's decoder; zstd's frames, ours -------------------------------

SKIP: {
    skip $NO_ZSTD, 14 unless $HAVE_ZSTD;
    my (@bad_dict, @bad_plain);
    for my $v (@VALUES, '', 'x') {
        my ($st, $out) = zstd_cmd(compress($v, dictionary => $NPM_ID), '-d', '-c', '-D', $NPM_FILE);
        push @bad_dict, short_hex($v) unless $st == 0 && $out eq $v;
        ($st, $out) = zstd_cmd(compress($v, level => 19), '-d', '-c');
        push @bad_plain, short_hex($v) unless $st == 0 && $out eq $v;
    }
    is "@bad_dict", '', 'zstd -d -D reads our frames made with the dictionary, byte for byte';
    is "@bad_plain", '', 'zstd -d (no -D) reads our frames made without one';
    my ($st) = zstd_cmd(compress($NPM[2], dictionary => $NPM_ID), '-d', '-c');
    isnt $st, 0, '... and fails on a frame made with a dictionary (the dictionary is used)';
    my ($st2, $out2) = zstd_cmd(compress($NPM[2], dictionary => $ZSTD_ID), '-d', '-c', '-D', $ZSTD_FILE);
    ok $st2 == 0 && $out2 eq $NPM[2], "zstd -d -D reads frames made with zstd's own dictionary";

    my $v    = $NPM[3];
    my $file = file_of('value.json', $v);
    my %frames;
    (undef, $frames{default})  = zstd_cmd('', '-c', $file);
    (undef, $frames{no_check}) = zstd_cmd('', '-c', '--no-check', $file);
    (undef, $frames{dict})     = zstd_cmd('', '-c', '-D', $NPM_FILE, $file);
    (undef, $frames{zstd_dict}) = zstd_cmd('', '-c', '-19', '-D', $ZSTD_FILE, $file);
    (undef, $frames{pipe})     = run_filter($v, 'sh', '-c', 'cat | zstd -q -c');
    my %h = map { ($_ => header($frames{$_})) } keys %frames;
    ok $h{default}{checksum} && defined $h{default}{size} && !$h{default}{dictionary},
        "zstd's default frame: a checksum, a content size, no dictionary";
    ok !$h{no_check}{checksum}, '--no-check: no checksum';
    is $h{dict}{dictionary}, $NPM_ID, '-D: our dictionary ID in the header';
    is $h{zstd_dict}{dictionary}, $ZSTD_ID, "-D: zstd's dictionary ID in the header";
    ok !defined $h{pipe}{size}, 'from a pipe: no content size';
    my @bad = grep { my $back = decompress($frames{$_}); !defined $back || $back ne $v } sort keys %frames;
    is "@bad", '', "decompress reads all of zstd's frames (" . join(', ', sort keys %frames) . ')';

    # A frame with no content size that grows to 3 MB, and 163 KB of HTML.
    my $long = 'abcdefgh' x 393_216;
    my (undef, $f) = run_filter($long, 'sh', '-c', 'cat | zstd -q -c');
    ok !defined header($f)->{size}, '3 MB from a pipe: no content size';
    same_bytes decompress($f), $long, '... decompresses (the buffer grows)';
    (undef, $f) = run_filter($BIG, 'sh', '-c', 'cat | zstd -q -c --fast=3');
    same_bytes decompress($f), $BIG, '163 KB of HTML, --fast=3, from a pipe';

    (undef, $f) = zstd_cmd('', '-c', '--no-dictID', '-D', $NPM_FILE, $file);
    is decompress($f), undef, 'a frame made with a dictionary but without its ID (--no-dictID): undef';
}

# ---- decompress refuses, with undef ---------------------------------------------

{
    my $frame = compress($NPM[4], dictionary => $NPM_ID);
    my @not = (
        ['empty', ''], ['text', 'hello'], ['JSON', $NPM[4]],
        ['gzip', Compress::Zlib::memGzip($NPM[4])], ['zlib', Compress::Zlib::compress($NPM[4])],
        ['the magic alone', $MAGIC], ['the magic and garbage', $MAGIC . ("\xAA" x 40)],
        ['a skippable frame', "\x50\x2a\x4d\x18\x04\0\0\0abcd"],
        ['a skippable frame, then a frame', "\x50\x2a\x4d\x18\x04\0\0\0abcd" . $frame],
        ['a dictionary', $npm_dict],
    );
    for my $case (@not) {
        my ($what, $input) = @$case;
        my $res;
        my @w = warnings_of(sub { $res = eval { decompress($input) }; $res = "died: $@" if $@ });
        is $res, undef, "not one zstd frame ($what): undef";
        is "@w", '', '... without a warning';
    }

    my @trailing = (
        ['a byte', "\0"], ['CRLF', "\r\n"], ['the frame again', $frame],
        ['a skippable frame', "\x50\x2a\x4d\x18\0\0\0\0"],
    );
    for my $case (@trailing) {
        is decompress($frame . $case->[1]), undef, "a frame and then $case->[0]: undef";
    }

    my @bad;
    for my $len (0 .. length($frame) - 1) {
        my $decoded = eval { decompress(substr $frame, 0, $len) };
        push @bad, $len if $@ || defined $decoded;
    }
    is "@bad", '', 'every truncation of a frame (' . length($frame) . ' lengths): undef';

    # Our frames carry no checksum: a flipped literal decodes to other data
    # of the stated size (see PERFORMANCE in the POD). Nothing dies, and
    # what does decode has the right length.
    my $plain = compress($NPM[5]);
    my ($died, $wrong_len, $undef, $other) = (0, 0, 0, 0);
    my @w = warnings_of(sub {
        for my $pos (0 .. length($plain) - 1) {
            for my $mask (0x01, 0x80, 0xFF) {
                my $c = $plain;
                substr($c, $pos, 1) = chr(ord(substr $c, $pos, 1) ^ $mask);
                my $decoded = eval { decompress($c) };
                if ($@)                                   { $died++ }
                elsif (!defined $decoded)                 { $undef++ }
                elsif (length $decoded != length $NPM[5]) { $wrong_len++ }
                elsif ($decoded ne $NPM[5])               { $other++ }
            }
        }
    });
    is $died, 0, 'corrupted frames (each byte flipped 3 ways): decompress never dies';
    is $wrong_len, 0, '... and never returns data of another size than the stated one';
    cmp_ok $undef, '>', 0, "... $undef undef, $other decoded to other data of the right size (no checksum)";
    is scalar(grep { !/zstd dictionary \d+ is not loaded/ } @w), 0,
        '... no warning but for a dictionary ID the flips made up';
}

SKIP: {
    skip $NO_ZSTD, 3 unless $HAVE_ZSTD;
    # zstd's frames carry a checksum: no corruption gets through as data.
    my $v = $NPM[6];
    my (undef, $frame) = zstd_cmd('', '-c', '-D', $NPM_FILE, file_of('six.json', $v));
    ok header($frame)->{checksum}, "zstd's frame has a checksum";
    my ($undef, $same, @garbage) = (0, 0);
    my @w = warnings_of(sub {
        for my $pos (0 .. length($frame) - 1) {
            for my $mask (0x01, 0x10, 0x80, 0xFF) {
                my $c = $frame;
                substr($c, $pos, 1) = chr(ord(substr $c, $pos, 1) ^ $mask);
                my $decoded = eval { decompress($c) };
                if ($@)                   { push @garbage, "$pos/$mask died: $@" }
                elsif (!defined $decoded) { $undef++ }
                elsif ($decoded eq $v)    { $same++ }    # e.g. a larger window descriptor
                else                 { push @garbage, "$pos/$mask" }
            }
        }
    });
    is "@garbage", '', 'every byte of a checksummed frame flipped 4 ways: undef (or the same data), never garbage';
    note "$undef undef, $same the same data";
    is scalar(grep { !/zstd dictionary \d+ is not loaded/ } @w), 0,
        '... no warning but for a dictionary ID the flips made up';
}

# ---- a frame whose dictionary is not loaded ----------------------------------------

{
    # Frames naming IDs never loaded in this process: one warning per ID,
    # however many values name it. (Two bytes differ from the loaded ID:
    # no one-byte flip of the corruption tests above can have named them.)
    my ($x1, $x2) = ($NPM_ID ^ 0x0101, $NPM_ID ^ 0x0202);
    my @frames = map { compress($_, dictionary => $NPM_ID) } @NPM[10 .. 49];
    my @f1 = map { with_dictionary_id($_, $x1) } @frames;
    my @f2 = map { with_dictionary_id($_, $x2) } @frames;
    is header($f1[0])->{dictionary}, $x1, "frames patched to name dictionary $x1 (and $x2)";
    my @res;
    my @w = warnings_of(sub { @res = map { decompress($_) } @f1, @f2, @f1 });
    is scalar(grep { defined } @res), 0, '120 values naming two dictionaries not loaded: all undef';
    is scalar @w, 2, '... with exactly two warnings' or diag explain \@w;
    like $w[0], qr/\ACache::Memcached::RustXS: zstd dictionary $x1 is not loaded, so values compressed with it are misses \(load it with Cache::Memcached::RustXS::Zstd::load_dictionary\) at \S+ line \d+\.\n\z/,
        "... the first for dictionary $x1, naming it";
    like $w[1], qr/zstd dictionary $x2 is not loaded/, "... the second for dictionary $x2";
    @w = warnings_of(sub { decompress($_) for @f2, @f1 });
    is scalar @w, 0, '... and none more later in the process';
    is decompress($frames[0]), $NPM[10], 'the unpatched frames still decode';

    # Rolling out: frames written by a process that has a dictionary this
    # one loads only later.
    my $late = train_dictionary(\@COMPAT, size => 8192);
    my $late_id = uint_le(substr $late, 4, 4);
    my $late_file = file_of('late.dict', $late);
    my ($written, $child) = in_child(sub {
        my $id = load_dictionary($late_file);
        return [ $id, map { compress($_, dictionary => $id) } @COMPAT[0 .. 19] ];
    });
    die "child: $child->{died}" if defined $child->{died};
    is shift(@$written), $late_id, 'another process loaded a dictionary and wrote 20 values with it';
    @w = warnings_of(sub { @res = map { decompress($_) } @$written, @$written });
    is scalar(grep { defined } @res), 0, '... here, where it is not loaded: all undef';
    is scalar @w, 1, '... one warning';
    like $w[0], qr/zstd dictionary $late_id is not loaded/, '... naming the dictionary';
    is load_dictionary($late_file), $late_id, 'load it here too';
    @res = map { decompress($_) } @$written;
    is_deeply \@res, [ @COMPAT[0 .. 19] ], '... and the same frames decode';
}

# ---- frame_dictionary_id: the engine's reading of a header, against this test's ----

{
    my $frame = compress($NPM[5], dictionary => $NPM_ID);
    my %frames = (
        'no dictionary'          => compress($NPM[5]),
        'our dictionary'         => $frame,
        'an ID nobody loaded'    => with_dictionary_id($frame, 0x7E57_0001),
        'the largest ID'         => with_dictionary_id($frame, 0xFFFF_FFFF),
        'a 1-byte ID field'      => $MAGIC . "\x01" . chr(7 << 3) . "\x7f" . "\x01\x00\x00",
        'a 2-byte ID field'      => $MAGIC . "\x02" . chr(7 << 3) . pack('v', 0xBEEF) . "\x01\x00\x00",
        'a header alone'         => $MAGIC . "\x03" . chr(7 << 3) . pack('V', 123_456),
        'a crafted RLE frame'    => rle_frame('r', 1000, size => 1000),
    );
    if ($HAVE_ZSTD) {
        $frames{"zstd's dictionary"} = compress($NPM[5], dictionary => $ZSTD_ID);
        my $file = file_of('frame-id.json', $NPM[6]);
        (undef, $frames{'zstd -D'})          = zstd_cmd('', '-c', '-D', $NPM_FILE, $file);
        (undef, $frames{'zstd --no-dictID'}) = zstd_cmd('', '-c', '--no-dictID', '-D', $NPM_FILE, $file);
        (undef, $frames{'zstd, no -D'})      = zstd_cmd('', '-c', $file);
    }
    my %want = map { ($_ => header($frames{$_})->{dictionary}) } keys %frames;
    is_deeply { map { ($_ => frame_dictionary_id($frames{$_})) } keys %frames }, \%want,
        'frame_dictionary_id: the ID each header names, 0 for none (' . join(', ', sort keys %frames) . ')';
    is $want{'our dictionary'}, $NPM_ID, "... (this test's reading finds our dictionary's ID)";
    is frame_dictionary_id(\$frame), $NPM_ID, '... also through a reference';
    tie my $tied, 'CountingScalar', $frame;
    is frame_dictionary_id($tied), $NPM_ID, '... and a tied scalar';
    is tied($tied)->{fetches}, 1, '... fetched once';
    my $reserved = $frames{'no dictionary'};
    substr($reserved, 4, 1) = chr(ord(substr $reserved, 4, 1) | 0x08);
    my %not = (
        empty         => '',
        gzip          => Compress::Zlib::memGzip($NPM[5]),
        'zlib'        => Compress::Zlib::compress($NPM[5]),
        text          => $NPM[5],
        'magic alone' => $MAGIC,
        'a cut header' => substr($frame, 0, 6),
        'a reserved bit set' => $reserved,
        'a skippable frame' => "\x50\x2a\x4d\x18" . pack('V', 3) . 'abc',
        undef         => undef,
    );
    is_deeply [ grep { defined frame_dictionary_id($not{$_}) } sort keys %not ], [],
        'frame_dictionary_id: undef for anything but a whole frame header (' . join(', ', sort keys %not) . ')';
    dies_like sub { frame_dictionary_id("\x{263a}") }, qr/\AWide character in frame_dictionary_id/,
        'frame_dictionary_id: wide characters croak, as everywhere';
}

# ---- output caps: MaxOutput, bombs, lying sizes -------------------------------------

{
    no warnings 'once';
    my $two = substr($BIG x 13, 0, 2_000_000);
    my $sized = compress($two, level => 1);
    is header($sized)->{size}, 2_000_000, 'a 2 MB value: its frame states its size';
    my $unsized = rle_frame('z', 300_000);
    ok !defined header($unsized)->{size}, 'a crafted frame of 300 000 bytes that states no size';
    same_bytes decompress($unsized), 'z' x 300_000, '... decompresses (crafted right)';
    {
        local $Cache::Memcached::RustXS::Zlib::MaxOutput = 1 << 20;
        is decompress($sized), undef, 'MaxOutput 1 MiB: the 2 MB value is undef';
        same_bytes decompress($unsized), 'z' x 300_000, '... the 300 000 bytes are not';
        $Cache::Memcached::RustXS::Zlib::MaxOutput = 2_000_000;
        same_bytes decompress($sized), $two, 'MaxOutput exactly the size: decoded';
        $Cache::Memcached::RustXS::Zlib::MaxOutput = 1_999_999;
        is decompress($sized), undef, 'MaxOutput one byte short: undef';
        $Cache::Memcached::RustXS::Zlib::MaxOutput = 300_000;
        same_bytes decompress($unsized), 'z' x 300_000, 'no stated size, MaxOutput exactly the size: decoded';
        $Cache::Memcached::RustXS::Zlib::MaxOutput = 299_999;
        is decompress($unsized), undef, '... one byte short: undef';
    }
    same_bytes decompress($sized), $two, 'MaxOutput back to its default: decoded';

    # Lying sizes, on a raw block of 11 bytes.
    my $hello = 'hello world';
    is decompress(craft(size => 11, blocks => [[raw => $hello]])), $hello,
        'a crafted frame stating its true size decodes';
    for my $lie (0, 5, 10, 12, 1000, 900_000, 60_000_000, 2**40, 2**63) {
        is decompress(craft(size => $lie, blocks => [[raw => $hello]])), undef,
            "a frame of 11 bytes that states $lie: undef";
    }
    is decompress(craft(size => 300_000, blocks => [[rle => 'z', 131072]])), undef,
        'a frame of 131072 bytes that states 300 000: undef';
}

SKIP: {
    skip 'needs /proc/self/status (Linux)', 14 unless defined status_kb('VmRSS');
    my $zeros = 200 << 20;
    my %bomb = (
        'crafted, stating 200 MiB' => rle_frame("\0", $zeros, size => $zeros),
        'crafted, no size'         => rle_frame("\0", $zeros),
    );
    {
        my $data = "\0" x (32 << 20);
        $bomb{'compress, 32 MiB'} = compress($data, level => 1);
    }
    if ($HAVE_ZSTD) {
        my $sparse = "$TMP/zeros";
        open my $fh, '>', $sparse or die "$sparse: $!";
        truncate $fh, $zeros or die "truncate: $!";
        close $fh;
        (undef, $bomb{'zstd, from a file'}) = zstd_cmd('', '-c', $sparse);
        (undef, $bomb{'zstd, from a pipe'}) =
            run_filter('', 'sh', '-c', "head -c $zeros /dev/zero | zstd -q -c");
        unlink $sparse;
        is header($bomb{'zstd, from a file'})->{size}, $zeros, 'zstd of a 200 MiB file states its size';
        ok !defined header($bomb{'zstd, from a pipe'})->{size}, '... from a pipe it does not';
    }
    else {
        skip $NO_ZSTD, 2;
    }
    for my $what (sort keys %bomb) {
        my $frame = $bomb{$what};
        my ($res, $child) = in_child(sub {
            local $Cache::Memcached::RustXS::Zlib::MaxOutput = 1 << 20;
            my $rss = status_kb('VmRSS');
            my $decoded = decompress($frame);
            return join ',', defined $decoded ? 'defined' : 'undef', $rss;
        }, fresh_peak => 1);
        my $hwm = $child->{vm_hwm_kb};
        my ($got, $rss) = split /,/, $res // '';
        is $got, 'undef', "a bomb of zeros ($what, " . length($frame) . " bytes), MaxOutput 1 MiB: undef";
        cmp_ok $hwm - $rss, '<', 8 * 1024, "... peak RSS grew by " . ($hwm - $rss) . " kB, under 8 MB";
    }
    my ($res, $child) = in_child(sub {
        my @decoded = map { decompress(craft(size => $_, blocks => [[raw => 'hello world']])) }
            2**40, 60_000_000, 2**63;
        return join ',', map { defined $_ ? 'defined' : 'undef' } @decoded;
    }, fresh_peak => 1);
    my $vgrowth = $child->{vm_peak_growth_kb};
    is $res, 'undef,undef,undef', 'lying sizes 2**40, 60 MB, 2**63 (MaxOutput 64 MiB): undef';
    cmp_ok $vgrowth, '<', 8 * 1024, "... without a big allocation (VmPeak +$vgrowth kB)";
}

# ---- option errors ----------------------------------------------------------------

{
    my $C = 'Cache::Memcached::RustXS::Zstd::compress';
    dies_like sub { compress('x', levle => 3) }, qr/\A\Q$C: unknown option levle\E at /, 'compress: unknown option';
    dies_like sub { compress('x', 'level') }, qr/options come in pairs/, 'compress: an odd option list';
    for my $level (23, 100, -8, -100) {
        dies_like sub { compress('x', level => $level) },
            qr/\A\Q$C: level must be 0 (the default), 1 to 22 or -1 to -7, not $level\E at /, "compress: level $level";
    }
    ok eval { compress('x', level => $_); 1 }, "compress: level $_ is fine" for 1, 22, -1, -7;
    dies_like sub { compress('x', dictionary => 12345) }, qr/\A\Q$C: dictionary 12345 is not loaded\E at /,
        'compress: a dictionary not loaded';
    dies_like sub { compress('x', dictionary => 2**33) }, qr/no such dictionary ID/, 'compress: an ID over 32 bits';

    my $M = \&Cache::Memcached::RustXS::Zstd::compress_methods;
    dies_like sub { $M->(levle => 3) }, qr/compress_methods: unknown option\(s\): levle/, 'compress_methods: unknown option';
    dies_like sub { $M->(level => 23) }, qr/compress_methods: level must be 0 \(the default\), 1 to 22 or -1 to -7, not 23/,
        'compress_methods: level 23';
    my $missing = "$TMP/missing.dict";
    dies_like sub { $M->(dictionary => $missing) }, qr/\Qcannot open $missing\E/, 'compress_methods: a missing dictionary file';
    dies_like sub { $M->(max_output => 'lots') }, qr/max_output must be a size in bytes/, 'compress_methods: a bad max_output';
}

# ---- compress_methods for Cache::Memcached::Fast, called directly -------------------

{
    my ($c, $d) = @{ compress_methods() };
    my ($cd, $dd) = @{ compress_methods(dictionary => $NPM_FILE, level => 6) };
    my $v = $NPM[7];
    my ($out, $back, $out_d) = ('', '', '');
    ok $c->(\$v, \$out), 'compress_methods: the compressor compresses';
    is header($out)->{dictionary}, 0, '... a zstd frame without dictionary';
    ok $cd->(\$v, \$out_d), 'with dictionary => FILE';
    is header($out_d)->{dictionary}, $NPM_ID, '... a zstd frame naming it';
    same_bytes $out_d, compress($v, level => 6, dictionary => $NPM_ID), '... the same bytes as compress';
    for my $case (['zstd', $out], ['zstd with dictionary', $out_d],
                  ['gzip', Compress::Zlib::memGzip($v)], ['zlib', Compress::Zlib::compress($v)]) {
        $back = '';
        ok $d->(\$case->[1], \$back) && $back eq $v, "the decompressor reads $case->[0]";
    }
    $back = 'untouched';
    ok !$d->(\'not compressed', \$back), '... and says no to anything else';
    is $back, 'untouched', '... leaving the output alone';
    my $jpeg = "\xff\xd8\xff\xe0" . ('A' x 5000);
    ok !$c->(\$jpeg, \$out), 'the compressor declines a JPEG';
    my $cap = compress_methods(max_output => 1000)->[1];
    ok !$cap->(\$out, \$back), 'max_output 1000: a larger value is refused';
}

# ---- leaks ---------------------------------------------------------------------------

SKIP: {
    skip leaktrace_missing(), 1 if leaktrace_missing();
    my $frame = compress($NPM[8], dictionary => $NPM_ID);
    my $next_id = 0x7E570000;
    my $bad_file = file_of('leak-bad.dict', 'not a dictionary');
    my ($mc, $md) = @{ compress_methods() };
    my %ops = (
        compress_ok        => sub { compress($NPM[8], level => 1, dictionary => $NPM_ID) },
        compress_bad_level => sub { eval { compress('x', level => 99) } },
        compress_wide      => sub { eval { compress("\x{263a}") } },
        compress_no_dict   => sub { eval { compress('x', dictionary => 77) } },
        compress_option    => sub { eval { compress('x', bogus => 1) } },
        decompress_ok      => sub { decompress($frame) },
        decompress_garbage => sub { decompress("$MAGIC garbage") },
        decompress_trunc   => sub { decompress(substr $frame, 0, 20) },
        decompress_missing => sub {    # a new ID each time: the warning path
            local $SIG{__WARN__} = sub { };
            decompress(with_dictionary_id($frame, $next_id++));
        },
        decompress_tied    => sub { tie my $t, 'CountingScalar', $frame; decompress($t) },
        frame_id           => sub { frame_dictionary_id($frame) },
        frame_id_none      => sub { frame_dictionary_id('not a frame') },
        decompress_bomb    => sub {
            local $Cache::Memcached::RustXS::Zlib::MaxOutput = 1000;
            decompress(rle_frame('z', 5000));
        },
        train_ok           => sub { train_dictionary([ @COMPAT[0 .. 49] ], size => 2048) },
        train_fail         => sub { eval { train_dictionary(['a', 'b']) } },
        train_samples      => sub { train_dictionary_with_parameters([ @COMPAT[0 .. 49] ], size => 2048,
                                                                     method => 'samples', id => 3) },
        frame_sizes_dict   => sub { frame_sizes([ @COMPAT[0 .. 9] ], level => 9, dictionary => $npm_dict) },
        frame_sizes_bad    => sub { eval { frame_sizes(['x'], dictionary => 'no') } },
        load_again         => sub { load_dictionary($NPM_FILE) },
        load_missing       => sub { eval { load_dictionary("$TMP/none") } },
        load_bad           => sub { eval { load_dictionary($bad_file) } },
        methods_new        => sub { compress_methods(level => 5) },
        methods_call       => sub {
            my ($compressed, $back) = ('', '');
            $mc->(\$NPM[8], \$compressed);
            $md->(\$compressed, \$back);
        },
    );
    # (no_leaks warms caches first: Carp, the dictionary's tables.)
    no_leaks("$_: no SV leaked", $ops{$_}) for sort keys %ops;
}

is "@WARNINGS", '', 'no other warning in the whole test';

done_testing;

# ---- tied helpers -------------------------------------------------------------------

package CountingScalar;
sub TIESCALAR { my ($class, $v) = @_; return bless { v => $v, fetches => 0 }, $class }
sub FETCH     { $_[0]{fetches}++; return $_[0]{v} }
sub STORE     { $_[0]{v} = $_[1] }

package CountingArray;
sub TIEARRAY  { my ($class, @v) = @_; return bless [@v], $class }
sub FETCH     { return $_[0][ $_[1] ] }
sub FETCHSIZE { return scalar @{ $_[0] } }
sub STORE     { $_[0][ $_[1] ] = $_[2] }
sub STORESIZE { $#{ $_[0] } = $_[1] - 1 }
