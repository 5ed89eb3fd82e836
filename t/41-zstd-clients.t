#!/usr/bin/perl
# zstd values on a real memcached, across clients: every writer (stock
# Cache::Memcached and Cache::Memcached::Fast writing gzip, ours writing
# gzip or zstd, with or without a dictionary) against every reader (stock
# and ours), each reader in a process that has the dictionaries loaded and
# in one that has not. What "ROLLING OUT AND BACK" in
# Cache::Memcached::RustXS::Zstd promises: gzip and uncompressed values are
# read by everyone; a zstd value is read by our readers that have its
# dictionary, and is a miss -- never garbage, never a die -- for the others,
# our readers warning once per missing dictionary ID per process.
#
# Also: what is stored really is zstd (with the dictionary's ID) or gzip;
# Cache::Memcached::RustXS::Memcached leaves Compress::Zlib::memGzip alone
# for other objects; values that do not compress well enough are stored raw.
#
# Dictionary loading is for the whole process and cannot be undone: the
# readers without dictionaries run in children forked before any dictionary
# is loaded. Without memcached the file skips; without
# Cache::Memcached::Fast (perl 5.10.1, or a host with Cache::Memcached
# alone) the Fast writers and readers skip, and without Cache::Memcached (a
# host with Fast alone) those that are or use it, our
# Cache::Memcached::RustXS::Memcached included. A stock Fast reader is made
# as its version needs: before 0.28, Fast has no decompressor unless
# compress_threshold or compress_methods is given, so the stock reader has
# compress_threshold there (t/21 shows what happens without).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use POSIX ();
use Storable ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::GetParser ();
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing fast_needs_threshold same_value);
use CMRXTest::Memcached;
use CMRXTest::Peers qw(spew);
use CMRXTest::Stored qw(stored_as);

plan skip_all => 'needs Cache::Memcached or Cache::Memcached::Fast: '
    . join('; ', cache_memcached_missing(), fast_missing())
    if cache_memcached_missing() && fast_missing();
my $server = CMRXTest::Memcached->start_or_skip;    # before any test
my $CM     = cache_memcached_missing() ? 0 : 1;
require Cache::Memcached::RustXS::Memcached if $CM;    # a Cache::Memcached

# Every warning of this process outside read_all (which keeps its own):
# there must be none.
my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };
my $ADDR   = $server->address;
my $FAST   = fast_missing() ? 0 : 1;
my $TMP    = File::Temp->newdir;                   # removed at exit
my $Zstd   = 'Cache::Memcached::RustXS::Zstd';
my $THRESHOLD = 100;

# ---- helpers ---------------------------------------------------------------

# 'ok' (the value), 'miss' (undef or absent), 'GARBAGE' or 'DIED'.
sub outcome {
    my ($got, $want) = @_;
    return $got->[1] if $got->[0] eq 'died';
    return same_value($got->[1], $want) ? 'ok' : defined $got->[1] ? 'GARBAGE' : 'miss';
}

# A deterministic pseudo-random string of $n bytes (incompressible).
sub random_bytes {
    my ($n, $seed) = @_;
    my $x = $seed;
    return substr pack('N*', map { $x = ($x * 1103515245 + 12345) % 2**31; $x ^ ($x >> 7) }
                       1 .. int($n / 4) + 1), 0, $n;
}

# ---- data: values and dictionaries -----------------------------------------------

my $corpus = corpus_values('bench/data/values');
my @NPM    = map { $_->[1] } @{ $corpus->{npm} };
my @COMPAT = map { $_->[1] } @{ $corpus->{compat} };
my @GH     = map { $_->[1] } @{ $corpus->{gh} };

my %VALUES = (
    npm    => $NPM[5],
    compat => $COMPAT[7],
    gh     => $GH[3],
    ref    => { package => $NPM[9], feature => $COMPAT[11], ids => [1 .. 40] },
    short  => '{"a":1}',
);
my @VNAMES = sort keys %VALUES;
cmp_ok length $VALUES{$_}, '>=', 4 * $THRESHOLD, "value $_ is well over the threshold" for qw(npm compat gh);
cmp_ok length $VALUES{short}, '<', $THRESHOLD, 'value short is under it';

# Two dictionaries, so that "one warning per dictionary ID" means something:
# A for Cache::Memcached::RustXS::Memcached, B for Fast. Trained here, not
# loaded yet.
my $DICT_A = spew("$TMP/npm.dict", $Zstd->can('train_dictionary')->(\@NPM));
my $DICT_B = spew("$TMP/compat.dict", $Zstd->can('train_dictionary')->(\@COMPAT));
my ($ID_A, $ID_B) = map { open my $fh, '<:raw', $_ or die $!; read $fh, my $h, 8; unpack 'x4 V', $h }
    $DICT_A, $DICT_B;
isnt $ID_A, $ID_B, "two dictionaries, IDs $ID_A and $ID_B";

# ---- the clients -----------------------------------------------------------------

# Writers: name => [what it stores for a compressible value, constructor].
my %WRITERS = (
    cm_stock       => ['gzip', sub { Cache::Memcached->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD }) }],
    rx_zstd_dict   => ["zstd+$ID_A", sub { Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD, zstd => { level => 3, dictionary => $DICT_A } }) }],
    rx_zstd        => ['zstd', sub { Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD, zstd => {} }) }],
    fast_stock     => ['gzip', sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD }) }],
    fast_zlib      => ['gzip', sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD,
                         compress_methods => Cache::Memcached::RustXS::Zlib::compress_methods() }) }],
    fast_zstd_dict => ["zstd+$ID_B", sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD,
                         compress_methods => $Zstd->can('compress_methods')->(dictionary => $DICT_B) }) }],
    fast_zstd      => ['zstd', sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                         compress_threshold => $THRESHOLD,
                         compress_methods => $Zstd->can('compress_methods')->() }) }],
);
# Readers: name => [ours (reads zstd)?, constructor]. None loads a dictionary.
my %READERS = (
    cm_pp     => [0, sub { Cache::Memcached->new({ servers => [$ADDR],
                    parser_class => 'Cache::Memcached::GetParser' }) }],
    cm_rx     => [1, sub { Cache::Memcached->new({ servers => [$ADDR],
                    parser_class => 'Cache::Memcached::RustXS::GetParser' }) }],
    rx_mc     => [1, sub { Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR] }) }],
    fast      => [0, sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                    (fast_needs_threshold() ? (compress_threshold => $THRESHOLD) : ()) }) }],
    fast_zlib => [1, sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                    compress_methods => Cache::Memcached::RustXS::Zlib::compress_methods() }) }],
    fast_zstd => [1, sub { Cache::Memcached::Fast->new({ servers => [$ADDR],
                    compress_methods => $Zstd->can('compress_methods')->() }) }],
);
my @WNAMES = grep { /^fast/ ? $FAST : $CM } sort keys %WRITERS;
my @RNAMES = grep { /^fast/ ? $FAST : $CM } sort keys %READERS;
note 'without the Fast writers and readers: ' . fast_missing() unless $FAST;
note 'without the Cache::Memcached writers and readers: ' . cache_memcached_missing() unless $CM;
note "the stock Fast reader has compress_threshold (Fast $Cache::Memcached::Fast::VERSION needs it)"
    if $FAST && fast_needs_threshold();
my @KEYS = map { my $w = $_; map { "zm:$w:$_" } @VNAMES } @WNAMES;

# What reader $r gets for value $v of writer $w, with or without the
# dictionaries loaded in its process: 'ok' or 'miss'.
sub expected {
    my ($r, $with, $w, $v) = @_;
    my $fmt = $WRITERS{$w}[0];
    return 'ok' if $v eq 'short' || $fmt eq 'gzip';    # raw or gzip: everyone
    return 'miss' unless $READERS{$r}[0];                # zstd: stock readers never
    return 'ok' if $fmt eq 'zstd';                       # no dictionary needed
    return $with ? 'ok' : 'miss';
}

# Reads every key with get and with get_multi; returns the results and the
# warnings. Any die is caught and reported as the outcome.
sub read_all {
    my ($r) = @_;
    my @warnings;
    local $SIG{__WARN__} = sub { push @warnings, $_[0] };
    my $client = $READERS{$r}[1]->();
    my (%get, %multi);
    for my $key (@KEYS) {
        my $v = eval { $client->get($key) };
        $get{$key} = $@ ? ['died', "DIED: $@"] : ['value', $v];
    }
    my $m = eval { $client->get_multi(@KEYS) };
    my $err = $@;
    $multi{$_} = $err ? ['died', "DIED: $err"] : ['value', $m->{$_}] for @KEYS;
    return { get => \%get, multi => \%multi, warnings => \@warnings };
}

# ---- readers without dictionaries: children forked before any is loaded ---------

# Each child waits for a line on its pipe, reads everything (without the
# dictionaries), then loads both and reads again; the results come back
# through another pipe. A child never returns into the test.
my (%child, @parent_ends);
for my $r (@RNAMES) {
    pipe my $go_r, my $go_w or die "pipe: $!";
    pipe my $res_r, my $res_w or die "pipe: $!";
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        close $_ for $go_w, $res_r, @parent_ends;
        my $line = <$go_r>;
        my $res = eval {
            die "no go\n" unless defined $line;
            my $without = read_all($r);
            $Zstd->can('load_dictionary')->($_) for $DICT_A, $DICT_B;
            { without => $without, late => read_all($r) };
        } || { died => "$@" };
        binmode $res_w;
        print {$res_w} Storable::nfreeze($res);
        close $res_w;
        POSIX::_exit(0);
    }
    close $go_r;
    close $res_w;
    $go_w->autoflush(1);
    push @parent_ends, $go_w, $res_r;
    $child{$r} = { pid => $pid, go => $go_w, res => $res_r };
}

# ---- writes ----------------------------------------------------------------------

my $memgzip = \&Compress::Zlib::memGzip;
my %writer = map { ($_ => $WRITERS{$_}[1]->()) } @WNAMES;    # loads A and B
for my $w (@WNAMES) {
    my @failed = grep { !$writer{$w}->set("zm:$w:$_", $VALUES{$_}) } @VNAMES;
    is "@failed", '', "$w sets every value";
}
ok \&Compress::Zlib::memGzip == $memgzip, 'Compress::Zlib::memGzip is the same function after the writes';

# What is stored: gzip or zstd (with its dictionary's ID), flags included.
for my $w (@WNAMES) {
    my $fmt  = $WRITERS{$w}[0];
    my $want = join ' ', map {
        $_ eq 'short' ? "$_:raw/0" : $_ eq 'ref' ? "$_:$fmt/3" : "$_:$fmt/2"
    } @VNAMES;
    my $got = join ' ', map { "$_:" . stored_as($ADDR, "zm:$w:$_", with_flags => 1) } @VNAMES;
    is $got, $want, "$w stores $fmt";
}

# ---- reads: with the dictionaries here, without them in the children ----------------

my %results;    # "$r $cond" => read_all's result
$results{"$_ with"} = read_all($_) for @RNAMES;
{
    local $SIG{PIPE} = 'IGNORE';    # a child that died is reported below
    print { $child{$_}{go} } "go\n" for @RNAMES;
}
for my $r (@RNAMES) {
    my $fh = $child{$r}{res};
    binmode $fh;
    my $got = do { local $/; <$fh> };
    waitpid $child{$r}{pid}, 0;
    my $res = defined $got && length $got ? Storable::thaw($got) : { died => "nothing (status $?)" };
    is $res->{died}, undef, "the child reading as $r without dictionaries ran";
    $results{"$r without"} = $res->{without} || { get => {}, multi => {}, warnings => [] };
    $results{"$r late"}    = $res->{late}    || { get => {}, multi => {}, warnings => [] };
}

# Each cell: reader (with/without/late) x writer, all values, get and get_multi.
my %table;    # what the compressed values gave, for the note below
for my $r (@RNAMES) {
    for my $cond (qw(with without late)) {
        my $res = $results{"$r $cond"};
        for my $w (@WNAMES) {
            my (@got, @want, %seen);
            for my $v (@VNAMES) {
                my $key = "zm:$w:$v";
                my $exp = expected($r, $cond ne 'without', $w, $v);
                my @out = map { outcome($res->{$_}{$key} || ['value'], $VALUES{$v}) } qw(get multi);
                push @want, "$v:$exp/$exp";
                push @got, "$v:$out[0]/$out[1]";
                @seen{@out} = () if $v ne 'short';
            }
            $table{$w}{"$r $cond"} = join '/', sort keys %seen;
            my $all_ok = !grep { expected($r, $cond ne 'without', $w, $_) ne 'ok' } @VNAMES;
            is "@got", "@want", "$r ($cond dictionaries) x $w: "
                . ($all_ok ? 'reads every value' : 'the compressed values are misses') . ' (get/get_multi)';
        }
    }
}

# Warnings: one per missing dictionary ID per process, from our readers
# only; none with the dictionaries (loaded first or late).
for my $r (@RNAMES) {
    my $ours = $READERS{$r}[0];
    my @want_ids = grep { my $id = $_; $ours && grep { $WRITERS{$_}[0] eq "zstd+$id" } @WNAMES } $ID_A, $ID_B;
    my @w = @{ $results{"$r without"}{warnings} };
    my @ids = map { /zstd dictionary (\d+) is not loaded/ ? $1 : "other: $_" } @w;
    is join(' ', sort @ids), join(' ', sort @want_ids),
        "$r without dictionaries: " . (@want_ids ? 'one warning per missing dictionary ID' : 'no warning');
    is "@{ $results{qq($r with)}{warnings} }", '', "$r with dictionaries: no warning";
    is "@{ $results{qq($r late)}{warnings} }", '', "$r with dictionaries loaded late: no warning";
}

my @COLS = map { my $r = $_; map { "$r $_" } qw(with without) } @RNAMES;
{
    my @cols = @COLS;
    my $width = 0;
    $width < length and $width = length for @cols, @WNAMES, 'writer \\ reader';
    my $row = sub { join(' ', map { sprintf '%-*s', $width, $_ } @_) . "\n" };
    my $out = $row->('writer \\ reader', @cols);
    $out .= $row->($_, @{ $table{$_} }{@cols}) for @WNAMES;
    note "compressed values (short ones are raw: read by all):\n$out";
}

SKIP: {
    skip fast_missing(), 1 if !$FAST;
    my @fast = grep { /^fast/ } @WNAMES;
    my @unread = grep { my $w = $_; grep { !defined $table{$w}{$_} } @COLS } @fast;
    ok @fast && !@unread, 'the Fast writers are in the matrix, each read by every reader'
        or diag "writers: @fast; not read by every reader: @unread";
}
SKIP: {
    skip cache_memcached_missing(), 1 if !$CM;
    my @cm = grep { !/^fast/ } @WNAMES;
    my @unread = grep { my $w = $_; grep { !defined $table{$w}{$_} } @COLS } @cm;
    ok @cm && !@unread, 'the Cache::Memcached writers are in the matrix, each read by every reader'
        or diag "writers: @cm; not read by every reader: @unread";
}

# ---- Compress::Zlib::memGzip stays Compress::Zlib's for everyone else ----------------

SKIP: {
    skip cache_memcached_missing(), 32 unless $CM;
    my $json = $VALUES{npm};
    my $rx = $writer{rx_zstd_dict};
    my $cm = Cache::Memcached->new({ servers => [$ADDR], compress_threshold => $THRESHOLD });
    for my $round (1 .. 2) {
        ok $rx->set("iso:rx$round", $json), "round $round: our object sets";
        ok $cm->set("iso:cm$round", $json), '... then a stock Cache::Memcached in the same process';
        is stored_as($ADDR, "iso:rx$round", with_flags => 1), "zstd+$ID_A/2", '... ours wrote zstd';
        is stored_as($ADDR, "iso:cm$round", with_flags => 1), 'gzip/2', '... the stock one gzip';
        ok \&Compress::Zlib::memGzip == $memgzip, '... memGzip is the same function';
        is substr(Compress::Zlib::memGzip($json), 0, 2), "\x1f\x8b", '... and still writes gzip';
    }
    ok $rx->add('iso:add', $json), 'add';
    is stored_as($ADDR, 'iso:add', with_flags => 1), "zstd+$ID_A/2", '... compresses with zstd';
    ok $rx->replace('iso:add', $VALUES{compat}), 'replace';
    is stored_as($ADDR, 'iso:add', with_flags => 1), "zstd+$ID_A/2", '... too';
    SKIP: {
        skip "Cache::Memcached $Cache::Memcached::VERSION has no append (1.27 on)", 2
            unless Cache::Memcached->can('append');
        ok $rx->append('iso:add', 'x' x 200), 'append (Cache::Memcached never compresses it)';
        is stored_as($ADDR, 'iso:add', with_flags => 1), "zstd+$ID_A/2", '... leaves the flags';
    }

    # Code that runs during our set (here its stat_callback; a signal
    # handler or a freeze hook would do the same) and sets with other
    # objects: the stock one writes gzip, another of ours its own zstd.
    my $other = $writer{rx_zstd};
    my $nesting = Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR],
        compress_threshold => $THRESHOLD, zstd => { dictionary => $DICT_A },
        stat_callback => sub {
            return unless $_[3] eq 'set';
            $cm->set('iso:nested-stock', $json);
            $other->set('iso:nested-rx', $json);
        } });
    ok $nesting->set('iso:outer', $json), 'our set whose stat_callback sets with two other objects';
    is stored_as($ADDR, 'iso:outer', with_flags => 1), "zstd+$ID_A/2", '... writes zstd with its dictionary';
    is stored_as($ADDR, 'iso:nested-stock', with_flags => 1), 'gzip/2', '... the stock object inside it writes gzip';
    is stored_as($ADDR, 'iso:nested-rx', with_flags => 1), 'zstd/2', '... and our other object its zstd without dictionary';
    ok \&Compress::Zlib::memGzip == $memgzip, '... memGzip is the same function after all that';

    # A set that dies (a wide character) leaves memGzip as it was.
    ok !eval { $rx->set('iso:wide', "\x{263a}" x 100); 1 }, 'our set of a wide character dies';
    like $@, qr/Wide character/, '... as Compress::Zlib would';
    ok \&Compress::Zlib::memGzip == $memgzip, '... and memGzip is Compress::Zlib\'s again';
    ok $cm->set('iso:after', $json) && stored_as($ADDR, 'iso:after', with_flags => 1) eq 'gzip/2', '... the stock object still writes gzip';

    my $off = Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR],
        compress_threshold => $THRESHOLD, zstd => { dictionary => $DICT_A } });
    $off->enable_compress(0);
    ok $off->set('iso:off', $json), 'compress_enable off';
    is stored_as($ADDR, 'iso:off', with_flags => 1), 'raw/0', '... stores raw';
    my $plain = Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], compress_threshold => $THRESHOLD });
    ok $plain->set('iso:plain', $json), 'ours without the zstd option';
    is stored_as($ADDR, 'iso:plain', with_flags => 1), 'gzip/2', '... writes gzip';
    is $plain->get('iso:rx1'), $json, '... and reads zstd';
}

# ---- compressed only when it saves enough -----------------------------------------------

{
    my $random = random_bytes(2000, 42);
    # About 10 % smaller with zstd: 1800 random bytes and 200 of one letter.
    my $tenth  = random_bytes(1800, 7) . ('a' x 200);
    my $third  = random_bytes(1300, 9) . ('a' x 700);    # about 35 % smaller
    my $frame = $Zstd->can('compress')->($tenth, dictionary => $CM ? $ID_A : $ID_B);    # one loaded
    my $ratio = length($frame) / length $tenth;
    ok $ratio > 0.8 && $ratio < 0.95, sprintf 'the 10 %% value compresses to %.2f of its size', $ratio;

    for my $w (grep { $CM } qw(rx_zstd_dict rx_zstd)) {
        my $c = $writer{$w};
        my %set = (random => $random, tenth => $tenth, third => $third);
        my %want = (random => 'raw/0', tenth => 'raw/0', third => "$WRITERS{$w}[0]/2");
        for my $k (sort keys %set) {
            ok $c->set("ratio:$w:$k", $set{$k}), "$w sets $k";
            is stored_as($ADDR, "ratio:$w:$k", with_flags => 1), $want{$k}, "... stored $want{$k} (Cache::Memcached's 20 % rule)";
            ok same_value($c->get("ratio:$w:$k"), $set{$k}), '... read back';
        }
    }
  SKIP: {
        skip fast_missing(), 12 unless $FAST;
        for my $case ([0.8, 'raw/0'], [0.95, "zstd+$ID_B/2"]) {
            my ($ratio_opt, $want) = @$case;
            my $f = Cache::Memcached::Fast->new({ servers => [$ADDR], compress_threshold => $THRESHOLD,
                compress_ratio => $ratio_opt,
                compress_methods => $Zstd->can('compress_methods')->(dictionary => $DICT_B) });
            ok $f->set("ratio:fast$ratio_opt:random", $random), "Fast, compress_ratio $ratio_opt: random bytes";
            is stored_as($ADDR, "ratio:fast$ratio_opt:random", with_flags => 1), 'raw/0', '... stored raw';
            ok $f->set("ratio:fast$ratio_opt:tenth", $tenth), "Fast, compress_ratio $ratio_opt: the 10 % value";
            is stored_as($ADDR, "ratio:fast$ratio_opt:tenth", with_flags => 1), $want, "... stored $want";
            ok same_value($f->get("ratio:fast$ratio_opt:tenth"), $tenth), '... read back';
          SKIP: {
                skip cache_memcached_missing(), 1 unless $CM;
                ok same_value($writer{rx_zstd}->get("ratio:fast$ratio_opt:tenth"), $tenth),
                    '... by Cache::Memcached::RustXS::Memcached too';
            }
        }
    }
}

is "@WARNINGS", '', 'no other warning in the whole test';

done_testing;
