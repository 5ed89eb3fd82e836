#!/usr/bin/perl
# Cache::Memcached::RustXS::Zlib against real peers: Compress::Zlib,
# IO::Compress::Gzip / IO::Uncompress::Gunzip, gzip(1) and Python's zlib.
# Round trips in both directions, every gzip header field, corruptions (with
# $gzerrno compared to Compress::Zlib's), strings and arguments, levels,
# output caps, a 1 GiB bomb and random / truncated garbage.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use File::Temp ();
use Compress::Zlib ();
use Compress::Raw::Zlib ();
use IO::Compress::Gzip qw(gzip $GzipError);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Cache::Memcached::RustXS::Zlib qw(memGzip memGunzip compress uncompress);
use CMRXTest::Peers qw(slurp spew run_filter have_gzip have_python python);
use CMRXTest::Child qw(in_child status_kb);

my $PKG = 'Cache::Memcached::RustXS::Zlib';
my $TMP = File::Temp->newdir;
my $seq = 0;

# ---- helpers ---------------------------------------------------------------

sub hex_of { my $h = unpack 'H*', $_[0]; length $h > 80 ? substr($h, 0, 80) . '...' : $h }

# A raw DEFLATE stream (no header) of $data, with zlib.
sub raw_deflate {
    my ($data, $level) = @_;
    my $d = Compress::Raw::Zlib::Deflate->new(-WindowBits => -15, -AppendOutput => 1,
                                              -Level => $level // 6);
    my $out = '';
    $d->deflate($data, $out) == 0 or die;
    $d->flush($out) == 0 or die;
    return $out;
}
sub crc32 { Compress::Raw::Zlib::crc32($_[0]) }

# Call Compress::Zlib::$fn and ours on copies of $input; returns
# ($cz_result, $cz_gzerrno, $our_result, $our_gzerrno).
# $gzerrno is set to 42 (which neither sets) before each call, so a value
# left by an earlier call cannot pass for this call's.
sub both {
    my ($fn, $input) = @_;
    no strict 'refs';
    my ($x, $y) = ($input, $input);
    $Compress::Zlib::gzerrno = 42;
    my $cz = &{"Compress::Zlib::$fn"}($x);
    my $cz_err = $Compress::Zlib::gzerrno;
    $Compress::Zlib::gzerrno = 42;
    my $us = &{"${PKG}::$fn"}($y);
    return ($cz, $cz_err, $us, $Compress::Zlib::gzerrno);
}

# Compress::Zlib's memGunzip sets $gzerrno since IO-Compress 2.024 (RT#47283);
# before (perl 5.10.1 ships 2.020) it leaves it alone. Ours always sets it.
my $CZ_SETS_GZERRNO = Compress::Zlib->VERSION >= 2.024;

sub cz_gzerrno_ok {    # an assertion about Compress::Zlib's own $gzerrno
    my ($ok, $name) = @_;
  SKIP: {
        skip "Compress::Zlib $Compress::Zlib::VERSION does not set \$gzerrno "
           . "in memGunzip (2.024 and later do): $name", 1
            unless $CZ_SETS_GZERRNO;
        ok $ok, $name;
    }
}

# ---- corpus ----------------------------------------------------------------

srand 20240501;
my $json = slurp('t/data/seed.json');
my @words = qw(the memcached value server client gzip zlib deflate perl key
               flags bytes cache miss hit compress level header trailer);
my %corpus = (
    'empty'         => '',
    'one byte'      => 'x',
    'one NUL'       => "\0",
    'all 256 bytes' => join('', map chr, 0 .. 255),
    'seed JSON'     => $json,
    '1 MB zeros'    => "\0" x (1 << 20),
    'random 64 KB'  => join('', map chr(int rand 256), 1 .. 65536),
    'text 100 KB'   => substr(join(' ', map $words[rand @words] . (rand() < .1 ? ".\n" : ''),
                                   1 .. 20000), 0, 100_000),
);
my @names = sort keys %corpus;
is length $json, 9163, 'seed JSON fixture present';

# ---- round trips -----------------------------------------------------------

for my $name (@names) {
    my $data = $corpus{$name};
    my $gz   = memGzip($data);
    my $z    = compress($data);
    ok defined $gz && defined $z, "$name: memGzip and compress give output";
    is memGunzip($gz), $data, "$name: ours -> ours (gzip)";
    is uncompress($z), $data, "$name: ours -> ours (zlib)";
    is substr($gz, -8), substr(Compress::Zlib::memGzip($data), -8),
        "$name: trailer (CRC-32, ISIZE) equals Compress::Zlib's";

    # Compress::Zlib, both ways
    is Compress::Zlib::memGunzip(my $c = $gz), $data, "$name: ours -> Compress::Zlib::memGunzip";
    is Compress::Zlib::uncompress($z), $data, "$name: ours -> Compress::Zlib::uncompress";
    is memGunzip(Compress::Zlib::memGzip($data)), $data, "$name: Compress::Zlib::memGzip -> ours";
    is uncompress(Compress::Zlib::compress($data)), $data, "$name: Compress::Zlib::compress -> ours";

    # IO::Compress::Gzip / IO::Uncompress::Gunzip, buffers and files
    my $file = "$TMP/io" . ++$seq . '.gz';
    spew($file, $gz);
    my ($buf_out, $file_out, $io_gz) = ('', '', '');
    ok gunzip(\$gz => \$buf_out, Strict => 1), "$name: Gunzip buffer ok" or diag $GunzipError;
    ok gunzip($file => \$file_out, Strict => 1), "$name: Gunzip file ok" or diag $GunzipError;
    ok $buf_out eq $data && $file_out eq $data, "$name: ours -> IO::Uncompress::Gunzip";
    gzip(\$data => $file, Minimal => 1) or die $GzipError;
    gzip(\$data => \$io_gz) or die $GzipError;
    is memGunzip(slurp($file)), $data, "$name: IO::Compress::Gzip file -> ours";
    is memGunzip($io_gz), $data, "$name: IO::Compress::Gzip buffer -> ours";

  SKIP: {
        skip 'gzip(1) not installed', 2 unless have_gzip();
        my ($rc, $out) = run_filter($gz, 'gzip', '-dc');
        ok $rc == 0 && $out eq $data, "$name: ours -> gzip -dc";
        ($rc, $out) = run_filter($data, 'gzip', '-c');
        ok $rc == 0 && memGunzip($out) eq $data, "$name: gzip -c -> ours";
    }
  SKIP: {
        skip 'python3 with zlib not available', 4 unless have_python();
        my ($rc, $out) = python(gunzip => $gz);
        ok $rc == 0 && $out eq $data, "$name: ours -> python zlib.decompress(d, 31)";
        ($rc, $out) = python(uncompress => $z);
        ok $rc == 0 && $out eq $data, "$name: ours -> python zlib.decompress";
        ($rc, $out) = python(gzip => $data);
        ok $rc == 0 && memGunzip($out) eq $data, "$name: python gzip.compress -> ours";
        ($rc, $out) = python(compress => $data);
        ok $rc == 0 && uncompress($out) eq $data, "$name: python zlib.compress -> ours";
    }
}

# ---- the header memGzip writes -----------------------------------------------

my $HEADER = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff";    # mtime 0, XFL 0, OS 255
for my $name ('empty', 'seed JSON', 'random 64 KB') {
    is hex_of(substr memGzip($corpus{$name}), 0, 10), hex_of($HEADER), "$name: our header";
    is hex_of(substr Compress::Zlib::memGzip($corpus{$name}), 0, 10), hex_of($HEADER),
        "$name: ... is Compress::Zlib's header";
}

# ---- header fields on input ----------------------------------------------------

use constant { FTEXT => 1, FHCRC => 2, FEXTRA => 4, FNAME => 8, FCOMMENT => 16 };

# A gzip member with the given flags; the extra field contains NULs, so a
# reader that looked for a NUL there would go wrong. $hcrc: header CRC to use.
sub member {
    my ($flags, $data, %o) = @_;
    my $h = pack 'C4 V C2', 0x1f, 0x8b, 8, $flags, 12345, 2, 3;
    my $extra = $o{extra} // "AB\x04\x00\0x\0y";
    $h .= pack('v', length $extra) . $extra if $flags & FEXTRA;
    $h .= ($o{name}    // "file\xe9.json") . "\0" if $flags & FNAME;
    $h .= ($o{comment} // 'a comment')     . "\0" if $flags & FCOMMENT;
    $h .= pack 'v', $o{hcrc} // crc32($h) & 0xffff if $flags & FHCRC;
    return wantarray ? ($h, raw_deflate($data), pack('VV', crc32($data), length $data))
                     : $h . raw_deflate($data) . pack('VV', crc32($data), length $data);
}

{
    my @bad;
    for my $flags (0 .. 31) {    # every combination of the four fields and FTEXT
        my $gz = member($flags, $json);
        my ($cz, undef, $us) = both(memGunzip => $gz);
        push @bad, $flags unless defined $cz && $cz eq $json && defined $us && $us eq $json;
    }
    is "@bad", '', 'all 32 flag combinations: ours and Compress::Zlib give the data';
    is memGunzip(member(FHCRC | FNAME, $json, hcrc => 0xdead)), $json,
        'a wrong header CRC is not checked (as memGunzip)';
    is memGunzip(member(FEXTRA, $json, extra => '')), $json, 'empty FEXTRA';
    is memGunzip(member(FEXTRA, $json, extra => "\xff" x 65535)), $json, 'FEXTRA of 65535 bytes';
    is memGunzip(member(FNAME | FCOMMENT, $json, name => '', comment => '')), $json,
        'empty FNAME and FCOMMENT';

    my %opts = (Name => 'f.json', Comment => 'a comment', ExtraField => [[ab => "x\0z"]],
                HeaderCRC => 1, TextFlag => 1, Time => 12345, OS_Code => 3);
    for my $opt (sort keys %opts, 'all') {
        my %use = $opt eq 'all' ? %opts : ($opt => $opts{$opt});
        gzip(\$json => \my $gz, Minimal => 0, %use) or die $GzipError;
        is memGunzip($gz), $json, "IO::Compress::Gzip with $opt -> ours";
    }
}

# ---- corruptions, compared with Compress::Zlib::memGunzip ---------------------

# expect: 'ok' (the data, gzerrno 0), 'data' (undef, gzerrno -3 / "data error"
# from both), 'undef' (undef from both; Compress::Zlib copies GunzipError into
# gzerrno for a corrupt or truncated deflate stream, often "", so only ours
# is checked for -3 there).
sub corrupt_case {
    my ($what, $input, $expect) = @_;
    my ($cz, $cz_err, $us, $us_err) = both(memGunzip => $input);
    if ($expect eq 'ok') {
        ok defined $cz && $cz eq $json, "$what: Compress::Zlib accepts";
        cz_gzerrno_ok 0 + $cz_err == 0, "$what: Compress::Zlib gzerrno 0";
        ok defined $us && $us eq $json && 0 + $us_err == 0, "$what: ours accepts";
        return;
    }
    ok !defined $cz, "$what: Compress::Zlib rejects";
    ok !defined $us, "$what: ours rejects";
    if ($expect eq 'data') {
        cz_gzerrno_ok 0 + $cz_err == -3 && "$cz_err" eq 'data error', "$what: Compress::Zlib gzerrno";
    }
    ok 0 + $us_err == -3 && "$us_err" eq 'data error', "$what: our gzerrno -3 / data error";
}

{
    my ($head, $body, $trailer) = member(FEXTRA | FNAME | FCOMMENT | FHCRC, $json);
    my $gz = $head . $body . $trailer;
    corrupt_case('intact member', $gz, 'ok');
    my $patch = sub { my ($at, $byte) = @_; my $c = $gz; substr($c, $at, 1) = $byte; $c };
    corrupt_case('bad magic byte 1', $patch->(0, "\x1e"), 'data');
    corrupt_case('bad magic byte 2', $patch->(1, "\x8c"), 'data');
    corrupt_case("method $_", $patch->(2, chr $_), 'data') for 0, 7, 9;
    corrupt_case(sprintf('reserved flag 0x%02x', $_), $patch->(3, chr(0x1e | $_)), 'data')
        for 0x20, 0x40, 0x80;
    corrupt_case("header cut at $_", substr($gz, 0, $_), 'data') for 0 .. length($head) - 1;
    corrupt_case('FEXTRA length past the end', "\x1f\x8b\x08\x04" . "\0" x 6 . "\xff\x00abc", 'data');
    corrupt_case("deflate cut to $_ bytes", $head . substr($body, 0, $_), 'undef')
        for 0, 1, int(length($body) / 2), length($body) - 1;
    corrupt_case('corrupt deflate (block type 3)', $head . "\x07" . substr($body, 1) . $trailer, 'undef');
    corrupt_case('missing trailer', $head . $body, 'ok');
    corrupt_case("partial trailer, $_ bytes", $head . $body . substr($trailer, 0, $_), 'ok') for 1 .. 7;
    corrupt_case("partial garbage trailer, $_ bytes", $head . $body . "\xff" x $_, 'ok') for 1 .. 7;
    corrupt_case("wrong CRC byte $_", $patch->(length($gz) - 8 + $_, "\x5a"), 'data') for 0 .. 3;
    for my $delta (1, -1, 1 << 24) {
        corrupt_case("wrong ISIZE ($delta)",
            $head . $body . pack('VV', crc32($json), length($json) + $delta), 'data');
    }
    corrupt_case('trailing garbage', $gz . 'garbage', 'ok');
    corrupt_case('trailing NULs', $gz . "\0" x 100, 'ok');
    corrupt_case('a second member after the first', $gz . memGzip('other'), 'ok');

    # gzerrno: reset by success, one variable under two names
    memGunzip('not gzip');
    is 0 + $Compress::Zlib::gzerrno, -3, 'failure sets gzerrno';
    memGunzip($gz);
    ok defined $Compress::Zlib::gzerrno && $Compress::Zlib::gzerrno == 0, 'success resets gzerrno to 0';
    memGunzip('not gzip');
    memGzip('x');
    is 0 + $Compress::Zlib::gzerrno, 0, 'memGzip resets gzerrno to 0';
    no warnings 'once';
    ok \$Cache::Memcached::RustXS::Zlib::gzerrno == \$Compress::Zlib::gzerrno,
        '$gzerrno is $Compress::Zlib::gzerrno';
    # (not `local`: that would put a new scalar in Compress::Zlib's glob)
    $Compress::Zlib::gzerrno = 42;
    is $Cache::Memcached::RustXS::Zlib::gzerrno, 42, '... seen from both names';
    $Cache::Memcached::RustXS::Zlib::gzerrno = 0;
}

# ---- strings and arguments -------------------------------------------------------

for my $fn (qw(memGzip memGunzip compress uncompress)) {
    no strict 'refs';
    for my $impl ($PKG, 'Compress::Zlib') {
        my $code = \&{"${impl}::$fn"};
        ok !eval { $code->("a\x{100}b"); 1 }, "$impl\::$fn croaks on a wide character";
        like $@, qr/^Wide character in $fn/, "... with Compress::Zlib's message";
    }
    my $ours = \&{"${PKG}::$fn"};
    for my $ref ([], {}, sub {1}) {
        ok !eval { $ours->($ref); 1 }, "$fn(" . ref($ref) . ' ref) croaks';
        like $@, qr/not a scalar reference/, '... not a scalar reference';
    }
    # Compress::Zlib::compress/uncompress also croak for a GLOB or REF
    # reference (and memGzip for a REF): so must ours, rather than read the
    # stringified glob or reference ("*main::STDOUT", "SCALAR(0x...)").
    for my $ref (\*STDOUT, \\'x') {
        # IO-Compress before 2.055 (perl 5.16 and older) gzips through
        # IO::Compress::Gzip, which takes a glob for an input filehandle:
        # memGzip(\*STDOUT) then reads STDOUT and warns ("Filehandle STDOUT
        # opened only for output"). Those warnings are Compress::Zlib's.
        my @cz_warnings;
        local $SIG{__WARN__} = sub { push @cz_warnings, $_[0] };
        my $cz_croaks = !eval { &{"Compress::Zlib::$fn"}($ref); 1 };
        note "Compress::Zlib::$fn(" . ref($ref) . " ref) warned: $_" for @cz_warnings;
        next unless $cz_croaks;
        ok !eval { $ours->($ref); 1 }, "$fn(" . ref($ref) . ' ref) croaks like Compress::Zlib';
    }
    is prototype($ours), prototype(\&{"Compress::Zlib::$fn"}), "$fn prototype is Compress::Zlib's";
}
is prototype(\&memGzip), '$', 'memGzip($)';
is prototype(\&compress), '$;$', 'compress($;$)';
{
    my @list = ('a', 'b');
    is memGunzip(memGzip(@list)), '2', 'memGzip(@list) takes the array in scalar context';
}

for my $pair ([memGzip => \&memGunzip], [compress => \&uncompress]) {
    my ($fn, $undo) = @$pair;
    no strict 'refs';
    my $enc = \&{"${PKG}::$fn"};
    my $czenc = \&{"Compress::Zlib::$fn"};
    my ($up, $cz_up, $plain) = ("caf\x{e9}") x 3;
    utf8::upgrade($_) for $up, $cz_up;
    is $enc->($up), $enc->($plain), "$fn: an upgraded downgradable string is its bytes";
    ok !utf8::is_utf8($up), "$fn: the caller's string was downgraded in place";
    $czenc->($cz_up);
    ok !utf8::is_utf8($cz_up), "$fn: ... as Compress::Zlib does";
    my $packed = $enc->($plain);
    utf8::upgrade(my $packed_up = $packed);
    is $undo->($packed_up), "caf\xe9", "$fn: an upgraded compressed string decompresses";
    is $undo->($enc->(\$plain)), "caf\xe9", "$fn: scalar reference accepted";
    is $undo->(\$packed), "caf\xe9", "$fn: decoder takes a scalar reference";
    my @warn;
    local $SIG{__WARN__} = sub { push @warn, @_ };
    is $undo->($enc->(undef)), '', "$fn(undef) compresses the empty string";
    is "@warn", '', '... without a warning';
}

{
    my $gz = memGzip($json);
    my ($ours, $cz) = ($gz, $gz);
    is memGunzip($ours), $json, 'memGunzip of a plain scalar';
    is $ours, $gz, '... leaves the argument alone';
    memGunzip(\$ours);
    is $ours, $gz, '... also through a reference';
    is Compress::Zlib::memGunzip($cz), $json, 'Compress::Zlib::memGunzip of a plain scalar';
    is $cz, '', '... empties it (the quirk we do not copy)';
}

# ---- levels -------------------------------------------------------------------------

{
    my $text = $corpus{'text 100 KB'};
    for my $level (-1 .. 9) {
        my $z = compress($text, $level);
        ok defined $z && Compress::Zlib::uncompress($z) eq $text, "compress level $level";
    }
    ok length(compress($text, 0)) > length $text, 'level 0 stores';
    ok length(compress($text, 1)) > length(compress($text, 9)), 'level 1 is bigger than 9';
    for my $level (10, -2, 100) {
        ok !defined Compress::Zlib::compress($text, $level), "Compress::Zlib: level $level undef";
        ok !defined compress($text, $level), "ours: level $level undef";
    }
    no warnings 'once';
    my $default = length memGzip($text);
    local $Cache::Memcached::RustXS::Zlib::Level = 1;
    my $fast = memGzip($text);
    ok length($fast) > $default, "\$Level = 1 makes bigger gzip (" . length($fast) . " > $default)";
    is Compress::Zlib::memGunzip($fast), $text, '... which is still valid';
    $Cache::Memcached::RustXS::Zlib::Level = 13;
    ok !defined memGzip($text), 'an impossible $Level gives undef, not a crash';
}

# ---- uncompress specifics ----------------------------------------------------------------

{
    my $z = compress($json);
    my $flip_last = $z; substr($flip_last, -1, 1) ^= "\x01";
    my %cases = (
        'missing Adler-32'   => [substr($z, 0, -4), 0],
        'one byte short'     => [substr($z, 0, -1), 0],
        'bad Adler-32'       => [$flip_last, 0],
        'bad header check'   => ["\x78\x9d" . substr($z, 2), 0],
        'preset dictionary'  => ["\x78\xbb" . substr($z, 2), 0],
        'not deflate (CM 7)' => ["\x77\x9c" . substr($z, 2), 0],
        'trailing garbage'   => [$z . 'tail', 1],
        'empty input'        => ['', 0],
    );
    for my $what (sort keys %cases) {
        my ($input, $good) = @{ $cases{$what} };
        my ($cz, undef, $us) = both(uncompress => $input);
        is defined $us, !!$good, "uncompress, $what: " . ($good ? 'accepted' : 'undef');
        is $us, $cz, '... as Compress::Zlib::uncompress';
    }
}

# ---- output caps, bombs and lying sizes -------------------------------------------------------

{
    no warnings 'once';
    my $three = $corpus{'text 100 KB'} x 30;    # 3 MB
    my $one   = substr $three, 0, 1_000_000;
    my ($gz3, $gz1, $z3, $z1) = (memGzip($three), memGzip($one), compress($three), compress($one));
    local $Cache::Memcached::RustXS::Zlib::MaxOutput = 2_000_000;
    ok !defined memGunzip($gz3), 'MaxOutput 2 MB: 3 MB gunzip fails';
    is 0 + $Compress::Zlib::gzerrno, -3, '... with data error';
    ok !defined uncompress($z3), '... 3 MB uncompress fails';
    is memGunzip($gz1), $one, '... 1 MB gunzip works';
    is uncompress($z1), $one, '... 1 MB uncompress works';
    $Cache::Memcached::RustXS::Zlib::MaxOutput = length $one;
    is memGunzip($gz1), $one, 'MaxOutput exactly the size: ok';
    is uncompress($z1), $one, '... uncompress too';
    $Cache::Memcached::RustXS::Zlib::MaxOutput = length($one) - 1;
    ok !defined memGunzip($gz1), 'MaxOutput one byte short: undef';
    ok !defined uncompress($z1), '... uncompress too';
}

SKIP: {
    skip 'needs /proc/self/status (Linux)', 8 unless defined status_kb('VmHWM');
    # 1 GiB of zeros, deflated 1 MB at a time: gzip and zlib around one stream.
    my $d = Compress::Raw::Zlib::Deflate->new(-WindowBits => -15, -Level => 1, -AppendOutput => 1);
    my ($mb, $raw, $crc, $adler) = ("\0" x (1 << 20), '', crc32(''), Compress::Raw::Zlib::adler32(''));
    for (1 .. 1024) {
        $d->deflate($mb, $raw) == 0 or die;
        $crc   = Compress::Raw::Zlib::crc32($mb, $crc);
        $adler = Compress::Raw::Zlib::adler32($mb, $adler);
    }
    $d->flush($raw) == 0 or die;
    my $bomb_gz = $HEADER . $raw . pack 'VV', $crc, (1 << 30);
    my $bomb_z  = "\x78\x01" . $raw . pack 'N', $adler;
    undef $raw;
    my ($res, $child) = in_child(sub {
        my $g = memGunzip($bomb_gz);
        my $e = 0 + $Compress::Zlib::gzerrno;
        my $u = uncompress($bomb_z);
        join ',', defined $g ? 'gz' : 'gz-undef', $e, defined $u ? 'z' : 'z-undef';
    }, fresh_peak => 1);
    my $hwm = $child->{vm_hwm_kb};
    is $res, 'gz-undef,-3,z-undef', '1 GiB bomb: memGunzip and uncompress give undef';
    SKIP: {
        # valgrind's own bookkeeping more than doubles the peak (script/memcheck)
        skip 'peak RSS is valgrind\'s under memcheck', 1 if $ENV{CMRX_MEMCHECK};
        cmp_ok $hwm, '<', 200 * 1024, "... peak RSS $hwm kB stays under 200 MB";
    }

    my $ten = memGzip('0123456789');
    for my $isize (0xFFFFFFFF, 1, 60_000_000) {
        my $liar = substr($ten, 0, -4) . pack 'V', $isize;
        my ($r, $liar_child) = in_child(sub {
            my ($x, $y) = ($liar, $liar);
            join ',', map { defined $_ ? 'def' : 'undef' }
                memGunzip($x), Compress::Zlib::memGunzip($y);
        }, fresh_peak => 1);
        my $vgrowth = $liar_child->{vm_peak_growth_kb};
        is $r, 'undef,undef', "ISIZE patched to $isize: rejected (as Compress::Zlib)";
        cmp_ok $vgrowth, '<', 32 * 1024, "... without a big allocation (VmPeak +$vgrowth kB)";
    }
}

# ---- garbage never crashes; results are Compress::Zlib's ------------------------------

{
    my ($gz, $z) = (memGzip($json), compress($json));
    my @mismatch;
    my $check = sub {
        my ($fn, $input) = @_;
        my ($cz, undef, $us) = both($fn => $input);
        push @mismatch, "$fn " . hex_of($input)
            if defined $cz != defined $us || (defined $cz && $cz ne $us);
    };
    $check->(memGunzip => substr $gz, 0, $_) for 0 .. length $gz;
    $check->(uncompress => substr $z, 0, $_) for 0 .. length $z;
    is "@mismatch[0 .. ($#mismatch < 4 ? $#mismatch : 4)]", '', 'every truncation: same result as Compress::Zlib';

    @mismatch = ();
    srand 7;
    my $random = sub { join '', map chr(int rand 256), 1 .. int rand $_[0] };
    for my $i (1 .. 1500) {
        $check->(memGunzip => $random->(80));
        $check->(memGunzip => $HEADER . $random->(80));
        $check->(uncompress => "\x78\x9c" . $random->(80));
        for my $base ($gz, $z) {    # a few bit flips in a valid stream
            my $m = $base;
            vec($m, int rand(8 * length $m), 1) ^= 1 for 1 .. 1 + int rand 3;
            $check->($base eq $gz ? 'memGunzip' : 'uncompress', $m);
        }
    }
    is scalar(@mismatch), 0, '7500 random and mutated inputs: same result as Compress::Zlib'
        or diag "first: $mismatch[0]";
}

done_testing;
