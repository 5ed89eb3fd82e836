#!/usr/bin/perl
# Benchmark of Cache-Memcached-RustXS against the modules it replaces.
#
#   perl -Mblib bench/run.pl                  (after perl Makefile.PL && make):
#                                             the tables, the ratios, the chart
#   perl -Mblib bench/run.pl --check          the same, judged against the bars
#   perl -Mblib bench/run.pl --report FILE    a recorded run again, running nothing
#   BENCH_QUICK=1 perl -Mblib bench/run.pl    (smoke test; without -Mblib or a
#                                             build our rows say "not built")
#
# Knobs: BENCH_ROUNDS, BENCH_SECONDS, BENCH_FILTER, BENCH_QUICK,
# MEMCACHED_SERVERS, BENCH_DATA. See bench/README.md.
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";    # dev/lib: helpers shared with the tests
use POSIX ();
use File::Path ();

use Compress::Zlib ();
use Cache::Memcached ();
use CMRXBench::Runner qw(loop_timed);
use CMRXBench::Parse qw(get_response parse_timed check_parse);
use CMRXBench::Data qw(data_files slurp text_value fake_jpeg raw_get_flags server_version);
use CMRXBench::Report qw(evaluate print_table write_json write_svg bar_counts);
use CMRXBench::Server ();

binmode STDOUT, ':encoding(UTF-8)';
binmode STDERR, ":encoding(UTF-8)";
STDERR->autoflush(1);
# Leave through exit, so END stops the memcached we started.
$SIG{INT} = $SIG{TERM} = sub { print STDERR "\ninterrupted\n"; exit 130 };
$SIG{PIPE} = sub { exit 141 };

my $ROOT    = "$FindBin::Bin/..";
my $QUICK   = $ENV{BENCH_QUICK} ? 1 : 0;
my $ROUNDS  = $ENV{BENCH_ROUNDS}  || ($QUICK ? 3    : 15);
my $SECONDS = $ENV{BENCH_SECONDS} || ($QUICK ? 0.03 : 0.2);
my $FILTER  = $ENV{BENCH_FILTER};
my $NS      = "cmrxb$$:";    # key namespace, so an existing server is not disturbed
my $DATA    = data_files($ROOT);

# --check judges the run against the bars; --report FILE prints a recorded run.
my ($CHECK, $REPORT) = (0, undef);
while (@ARGV) {
    my $arg = shift @ARGV;
    if    ($arg eq '--check')                 { $CHECK = 1 }
    elsif ($arg eq '--report' && @ARGV)       { $REPORT = shift @ARGV }
    else { die "usage: perl -Mblib bench/run.pl [--check] [--report FILE]\n" }
}

# ---- modules ---------------------------------------------------------------

my %LOAD_ERROR;    # module => first line of its load error
sub missing {      # undef when loadable, else the reason shown in the table
    my ($module, $ours) = @_;
    return undef if eval "require $module; 1";
    ($LOAD_ERROR{$module} = $@) =~ s/\n.*//s;
    $LOAD_ERROR{$module} =~ s/ \(\@INC contains:.*//;
    $LOAD_ERROR{$module} =~ s/,? at \S+ line \d+\.?$//;
    return $ours ? 'not built' : 'not loadable';
}

my $OUR_PARSER = 'Cache::Memcached::RustXS::GetParser';
my $OUR_ZLIB   = 'Cache::Memcached::RustXS::Zlib';
my $OUR_ZSTD   = 'Cache::Memcached::RustXS::Zstd';
my %MISSING = map { $_ => missing($_, $_ =~ /RustXS/ ? 1 : 0) }
    'Cache::Memcached::GetParser', 'Cache::Memcached::GetParserXS', 'Cache::Memcached::Fast',
    $OUR_PARSER, $OUR_ZLIB, $OUR_ZSTD;

my @PARSERS = (    # baselines first: the first one is the primary ratio
    { label => 'GetParserXS', role => 'baseline', class => 'Cache::Memcached::GetParserXS' },
    { label => 'GetParser',   role => 'baseline', class => 'Cache::Memcached::GetParser' },
    { label => 'ours',        role => 'ours',     class => $OUR_PARSER },
);
$_->{missing} = $MISSING{ $_->{class} } for @PARSERS;

# ---- inputs ----------------------------------------------------------------

my $JSON = slurp($DATA->{json});
my $DOC  = slurp($DATA->{doc});
my $SMALL = substr($JSON, 0, 300);
my $JPEG = fake_jpeg(30_000);

# The bars are the claims bench/README.md's "Bars" makes, not the figures of
# one run: a parse is never slower ("no loss", with a 5 % allowance); end
# to end, where memcached's and the kernel's time is in every parser's, it
# is on par (within a tenth) or better.
my %NOLOSS = (kind => 'noloss', min => 1.0, allow => 0.95);
my %ONPAR  = (kind => 'noloss', min => 1.0, allow => 0.9, name => 'on par');
sub at_least { +{ kind => 'ratio', min => $_[0] } }

# Get-response shapes, for the parse-only and the end-to-end rows.
my @SHAPES = (
    { name => '1x100B',     n => 1,   size => 100,       parse_bar => {%NOLOSS},    e2e_bar => {%ONPAR} },
    { name => '100x100B',   n => 100, size => 100,       parse_bar => at_least(1.5), e2e_bar => {%ONPAR} },
    { name => '100x1KB',    n => 100, size => 1024,      parse_bar => at_least(1.5), e2e_bar => {%ONPAR} },
    { name => '10x100KB',   n => 10,  size => 100 << 10, parse_bar => {%NOLOSS},    e2e_bar => {%ONPAR} },
    { name => '1x1MB',      n => 1,   size => 1 << 20,   parse_bar => {%NOLOSS},    e2e_bar => {%ONPAR} },
    { name => '100xgzJSON', n => 100, gzip => 1,         parse_bar => at_least(2.5), e2e_bar => at_least(2) },
);

# Items of a shape, built on first use: keys (without namespace), expected
# values, and the canned response (values gzip'd with flag 2 for gzip shapes).
sub shape_data {
    my ($shape) = @_;
    return $shape->{data} ||= do {
        my (@keys, %expect, @items);
        for my $i (0 .. $shape->{n} - 1) {
            my $key = sprintf 'k%03d', $i;
            my $val = $shape->{gzip} ? $JSON : text_value($DOC, $i, $shape->{size});
            push @keys, $key;
            $expect{$key} = $val;
            push @items, $shape->{gzip} ? ["$NS$key", 2, Compress::Zlib::memGzip($val)] : ["$NS$key", 0, $val];
        }
        +{ keys => \@keys, expect => \%expect, response => get_response(@items) };
    };
}

# ---- memcached -------------------------------------------------------------

my ($SERVERS, $SERVERS_DESC);
sub servers {
    ($SERVERS, $SERVERS_DESC) = CMRXBench::Server->servers unless $SERVERS;
    return $SERVERS;
}

# Store a shape's items once (raw, or gzip'd by Cache::Memcached itself).
my %stored;
sub store_shape {
    my ($shape) = @_;
    return if $stored{ $shape->{name} };
    my $d = shape_data($shape);
    my $memd = Cache::Memcached->new({
        servers => servers(), namespace => "$NS$shape->{name}:",
        compress_threshold => $shape->{gzip} ? 1 : 10_000_000,
    });
    for my $k (@{ $d->{keys} }) {
        $memd->set($k, $d->{expect}{$k}, 3600) or die "set $k failed\n";
    }
    if ($shape->{gzip}) {
        my $f = raw_get_flags(servers(), "$NS$shape->{name}:$d->{keys}[0]") // 'miss';
        die "value stored with flags $f, expected gzip (2)\n" unless $f =~ /^\d+$/ && $f & 2;
    }
    $stored{ $shape->{name} } = 1;
}

# ---- rows ------------------------------------------------------------------

my @GROUPS = (
    { id => 'parse', title => 'Cache::Memcached parser, parse-only (socketpair; on_item is Cache::Memcached\'s finalize)' },
    { id => 'parse-raw', title => 'Cache::Memcached parser, the parser alone (socketpair; no-op on_item)' },
    { id => 'e2e',   title => 'Cache::Memcached parser, end to end (get/get_multi on memcached)' },
    { id => 'codec', title => 'Compress::Zlib functions', notes_title => 'output size' },
    { id => 'fast',  title => 'Cache::Memcached::Fast compress_methods (compress_threshold 1000)', notes_title => 'notes' },
    { id => 'zstd',  title => 'zstd on real small values (bench/data/values: time per value and stored bytes over the odd-numbered values of each family; its dictionary, 16 KiB, trained on the even-numbered ones)', notes_title => 'stored bytes' },
    { id => 'zstd-fast', title => 'Cache::Memcached::Fast get_multi of 100 real small values (one 16 KiB dictionary for all families)', notes_title => 'notes' },
);

my @ROWS;

# 1. Parser, parse-only.
for my $shape (@SHAPES) {
    my $resp;
    push @ROWS, {
        group => 'parse', name => "parse $shape->{name}", label => $shape->{name},
        bars  => [ $shape->{parse_bar} ],
        setup => sub { $resp = \shape_data($shape)->{response} },
        impls => [ map {
            my $class = $_->{class};
            +{ %$_, build => sub { parse_timed($class, $resp, length $NS, servers()) } };
        } @PARSERS ],
        check => sub { check_parse($_[0]{class}, $resp, length $NS, servers(), shape_data($shape)->{expect}) },
    };
}

# 1b. The parser alone: the same, with a no-op on_item, for the shapes whose
# values need no decompression (finalize's per-value Perl work, about
# 0.25 us a value, is the same for every parser and dominates small values).
for my $shape (grep { !$_->{gzip} } @SHAPES) {
    my $resp;
    push @ROWS, {
        group => 'parse-raw', name => "parser alone $shape->{name}", label => $shape->{name},
        bars  => [],
        setup => sub { $resp = \shape_data($shape)->{response} },
        impls => [ map {
            my $class = $_->{class};
            +{ %$_, build => sub { parse_timed($class, $resp, length $NS, servers(), 1) } };
        } @PARSERS ],
        check => sub { check_parse($_[0]{class}, $resp, length $NS, servers(), shape_data($shape)->{expect}) },
    };
}

# 2. Parser, end to end through Cache::Memcached.
for my $shape (@SHAPES) {
    push @ROWS, {
        group => 'e2e', name => "e2e $shape->{name}",
        label => ($shape->{n} == 1 ? "get $shape->{name}" : "get_multi $shape->{name}"),
        bars  => [ $shape->{e2e_bar} ],
        setup => sub { store_shape($shape) },
        impls => [ map {
            my $class = $_->{class};
            +{ %$_, build => sub {
                my ($impl) = @_;
                my $memd = Cache::Memcached->new({
                    servers => servers(), namespace => "$NS$shape->{name}:",
                    parser_class => $class, compress_threshold => 10_000_000,
                });
                my @keys = @{ shape_data($shape)->{keys} };
                $impl->{fetch} = @keys == 1
                    ? sub { my $v = $memd->get($keys[0]); defined $v ? { $keys[0] => $v } : {} }
                    : sub { $memd->get_multi(@keys) };
                my $fetch = $impl->{fetch};
                loop_timed(sub { my $r = $fetch->() });
            } };
        } @PARSERS ],
        check => sub { CMRXBench::Parse::compare_values($_[0]{fetch}->(), shape_data($shape)->{expect}) },
    };
}

# 3. Codec functions, Compress::Zlib vs ours.
my @INPUTS = (
    { name => 'JSON', label => 'JSON 9 KB',       data => \$JSON },
    { name => '300B', label => '300 B',           data => \$SMALL },
    { name => 'doc',  label => 'document 300 KB', data => \$DOC },
);
# The claim (bench/README.md's "Bars"): each function at least 1.3 times
# Compress::Zlib's speed on the 9 KB JSON and twice it on the 300 KB
# document; no bar for 300 B. compress and memGzip of the JSON are the
# closest (1.5 to 1.9): Compress::Zlib's cost there is mostly allocating a
# level-9 state, and about 5.5 us of ours is libdeflate clearing its
# match-finder tables, a fixed cost per call.
my %CODEC_BAR = map { ($_ => { JSON => 1.3, doc => 2 }) } qw(memGzip memGunzip compress uncompress);
my %CODEC_INPUT = (    # what each function is given, made from the raw input
    memGzip    => sub { $_[0] },
    compress   => sub { $_[0] },
    memGunzip  => sub { Compress::Zlib::memGzip($_[0]) },
    uncompress => sub { Compress::Zlib::compress($_[0]) },
);
my %CODEC_UNDO = (    # how Compress::Zlib gets the raw input back from an output
    memGzip  => sub { my $c = $_[0]; Compress::Zlib::memGunzip($c) },
    compress => sub { Compress::Zlib::uncompress($_[0]) },
);
my @CODECS = (
    { label => 'Compress::Zlib', role => 'baseline', package => 'Compress::Zlib' },
    { label => 'ours',           role => 'ours',     package => $OUR_ZLIB, missing => $MISSING{$OUR_ZLIB} },
);

for my $fn (qw(memGzip memGunzip compress uncompress)) {
    for my $in (@INPUTS) {
        my $arg;
        my $sizes = exists $CODEC_UNDO{$fn};
        my $bar = $CODEC_BAR{$fn}{ $in->{name} };
        push @ROWS, {
            group => 'codec', name => "codec $fn $in->{name}", label => "$fn $in->{label}",
            bars  => [ ($bar ? at_least($bar) : ()), ($sizes ? { kind => 'size', max => 1.01 } : ()) ],
            setup => sub { $arg = $CODEC_INPUT{$fn}->(${ $in->{data} }) },
            impls => [ map {
                my $f = do { no strict 'refs'; \&{"$_->{package}::$fn"} };
                +{ %$_, f => $f, build => sub {
                    # memGunzip of Compress::Zlib empties its argument: give both a copy
                    $fn eq 'memGunzip' ? loop_timed(sub { my $c = $arg; my $r = $f->($c) })
                                       : loop_timed(sub { my $r = $f->($arg) });
                } };
            } @CODECS ],
            check => sub {
                my ($impl) = @_;
                my $c = $arg;
                my $out = $impl->{f}->($c);
                return 'returned undef' unless defined $out;
                return undef if !$sizes && $out eq ${ $in->{data} };
                return 'wrong output' if !$sizes;
                my $back = $CODEC_UNDO{$fn}->($out);
                return 'Compress::Zlib cannot read it back' unless defined $back && $back eq ${ $in->{data} };
                return (undef, size => length $out);
            },
            notes => $sizes && sub {
                my ($row) = @_;
                my ($baseline, $ours) = map { $_->{info} && $_->{info}{size} } @{ $row->{impls} };
                return '' unless defined $baseline;
                return "$baseline B" unless defined $ours;
                sprintf '%d B vs %d B = %.3f×', $baseline, $ours, $row->{size_ratio};
            },
        };
    }
}

# 4. Cache::Memcached::Fast with its default compress_methods vs ours.
my $FAST_NS = "${NS}fast:";
my @FAST_KEYS = map { sprintf 'm%03d', $_ } 0 .. 99;
my $fast_stored;
sub fast_client {
    my (%extra) = @_;
    return Cache::Memcached::Fast->new({
        servers => servers(), namespace => $FAST_NS, compress_threshold => 1000, %extra,
    });
}
sub fast_setup {    # values every get row reads, compressed by the default client
    return if $fast_stored++;
    my $memd = fast_client();
    $memd->set('get:json', $JSON, 3600) or die "Fast set failed\n";
    $memd->set($_, $JSON, 3600) or die "Fast set failed\n" for @FAST_KEYS;
    my $f = raw_get_flags(servers(), "${FAST_NS}get:json") // 'miss';
    die "Fast stored flags $f, expected compressed (2)\n" unless $f =~ /^\d+$/ && $f & 2;
}
my @FASTS = (
    { label => 'Fast default', role => 'baseline', methods => sub { () } },
    { label => 'ours', role => 'ours', missing => $MISSING{$OUR_ZLIB},
      methods => sub { (compress_methods => $OUR_ZLIB->can('compress_methods')->()) } },
);
$_->{missing} //= $MISSING{'Cache::Memcached::Fast'} for @FASTS;

my %FAST_OP = (    # name => [label, bar, op(memd, impl) -> closure, check(impl) -> error]
    'set JSON' => [
        'set JSON 9 KB', {%ONPAR},
        sub { my ($memd, $impl) = @_; my $k = "set:$impl->{role}"; sub { $memd->set($k, $JSON) or die "set failed\n" } },
        sub {
            my ($impl) = @_;
            my $k = "set:$impl->{role}";
            $impl->{memd}->set($k, $JSON) or return 'set failed';
            my $f = raw_get_flags(servers(), "$FAST_NS$k") // return 'not stored';
            return "stored uncompressed (flags $f)" unless $f & 2;
            my $v = fast_client()->get($k);
            return 'the default client reads it back wrong' unless defined $v && $v eq $JSON;
            return undef;
        },
    ],
    'get JSON' => [
        'get JSON 9 KB (compressed)', undef,
        sub { my ($memd) = @_; sub { my $v = $memd->get('get:json') } },
        sub { my $v = $_[0]{memd}->get('get:json'); defined $v && $v eq $JSON ? undef : 'wrong value' },
    ],
    'get_multi 100' => [
        'get_multi 100 compressed JSON', at_least(2),
        sub { my ($memd) = @_; sub { my $h = $memd->get_multi(@FAST_KEYS) } },
        sub {
            my $h = $_[0]{memd}->get_multi(@FAST_KEYS);
            CMRXBench::Parse::compare_values($h, { map { $_ => $JSON } @FAST_KEYS });
        },
    ],
);
for my $op ('set JSON', 'get JSON', 'get_multi 100') {
    my ($label, $bar, $make, $check) = @{ $FAST_OP{$op} };
    push @ROWS, {
        group => 'fast', name => "fast $op", label => $label,
        bars  => [ $bar || () ],
        setup => \&fast_setup,
        impls => [ map {
            my $m = $_->{methods};
            +{ %$_, build => sub {
                my ($impl) = @_;
                $impl->{memd} = fast_client($m->());
                loop_timed($make->($impl->{memd}, $impl));
            } };
        } @FASTS ],
        check => $check,
    };
}

# The compress closure itself on an incompressible JPEG-like payload.
push @ROWS, {
    group => 'fast', name => 'fast JPEG compress', label => 'compress JPEG 30 KB',
    bars  => [ { kind => 'max_us', max => 20 } ],
    impls => [ map {
        my $make = $_->{make};
        +{ %$_, build => sub {
            my $f = $_[0]{compress} = $make->();
            loop_timed(sub { my $out; my $r = $f->(\$JPEG, \$out) });
        } };
    } (
        { label => 'Fast default', role => 'baseline',
          make => sub { sub { ${ $_[1] } = Compress::Zlib::memGzip(${ $_[0] }); 1 } } },
        { label => 'ours', role => 'ours', missing => $MISSING{$OUR_ZLIB},
          make => sub { $OUR_ZLIB->can('compress_methods')->()->[0] } },
    ) ],
    check => sub {
        my ($impl) = @_;
        my $rv = $impl->{compress}->(\$JPEG, \my $out);
        return (undef, result => 'declined: stored raw') unless $rv;
        my $c = $out;
        my $back = Compress::Zlib::memGunzip($c);
        return 'output does not gunzip to the input' unless defined $back && $back eq $JPEG;
        return (undef, result => sprintf('gzip %d B (%.0f%%)', length $out, 100 * length($out) / length $JPEG));
    },
    notes => sub { join '; ', map { "$_->{label}: $_->{info}{result}" } grep { $_->{info} && $_->{info}{result} } @{ $_[0]{impls} } },
};

# 5. zstd with trained dictionaries on real cache-sized values.
my ($CORPUS, %HELD_OUT, %DICT_ID, $ALL_DICT_FILE, $ALL_DICT_ID);
my $DICT_SIZE = 16 << 10;
sub corpus_setup {
    return if $CORPUS || $MISSING{$OUR_ZSTD};
    require CMRXDev::Corpus;    # here: it reads the corpus with our parser, which may not be built
    $CORPUS = CMRXDev::Corpus::corpus_values("$ROOT/bench/data/values");
    my @all_train;
    for my $fam (sort keys %$CORPUS) {
        my @v = map { $_->[1] } @{ $CORPUS->{$fam} };
        my @train = @v[ grep { $_ % 2 == 0 } 0 .. $#v ];
        $HELD_OUT{$fam} = [ @v[ grep { $_ % 2 == 1 } 0 .. $#v ] ];
        push @all_train, @train;
        my $dict = $OUR_ZSTD->can('train_dictionary')->(\@train, size => $DICT_SIZE);
        $DICT_ID{$fam} = load_dict_bytes($dict);
    }
    my $shared = $OUR_ZSTD->can('train_dictionary')->(\@all_train, size => $DICT_SIZE);
    ($ALL_DICT_FILE, $ALL_DICT_ID) = (dict_file($shared), load_dict_bytes($shared));
}
# The corpus is read with our parser: without it, no implementation has values.
my $NO_CORPUS = $MISSING{$OUR_ZSTD} ? 'no corpus' : undef;
my @DICT_FILES;
END { unlink @DICT_FILES }
sub dict_file {
    my ($bytes) = @_;
    my $path = "$FindBin::Bin/results/dict-$$-" . scalar(@DICT_FILES) . '.zdict';
    File::Path::make_path("$FindBin::Bin/results");
    open my $fh, '>:raw', $path or die "$path: $!\n";
    print {$fh} $bytes;
    close $fh or die "$path: $!\n";
    push @DICT_FILES, $path;
    return $path;
}
sub load_dict_bytes { $OUR_ZSTD->can('load_dictionary')->(dict_file($_[0])) }

# [family, value] of every held-out value, in a fixed order.
sub held_out { map { my $f = $_; map { [$f, $_] } @{ $HELD_OUT{$f} } } sort keys %HELD_OUT }

my %ZSTD_WAY = (    # label => [compress(family, value), decompress(stored)]
    'Compress::Zlib memGzip' => [ sub { Compress::Zlib::memGzip($_[1]) },
                                  sub { my $c = $_[0]; Compress::Zlib::memGunzip($c) } ],
    'our memGzip' => [ sub { $OUR_ZLIB->can('memGzip')->($_[1]) },
                       sub { $OUR_ZLIB->can('memGunzip')->($_[0]) } ],
    'zstd' => [ sub { $OUR_ZSTD->can('compress')->($_[1], level => 3) },
                sub { $OUR_ZSTD->can('decompress')->($_[0]) } ],
    'zstd + dictionary' => [ sub { $OUR_ZSTD->can('compress')->($_[1], level => 3, dictionary => $DICT_ID{ $_[0] }) },
                             sub { $OUR_ZSTD->can('decompress')->($_[0]) } ],
);
sub zstd_impl {
    my ($label, $role, $dir) = @_;
    my $missing = $label =~ /^Compress/ ? $NO_CORPUS : $label =~ /memGzip/ ? $MISSING{$OUR_ZLIB} // $NO_CORPUS : $MISSING{$OUR_ZSTD};
    my ($comp, $decomp) = @{ $ZSTD_WAY{$label} };
    return {
        label => $label, role => $role, missing => $missing,
        build => sub {
            my @values = held_out();
            my @stored = map { $comp->(@$_) } @values;
            my $i = 0;
            return $dir eq 'compress'
                ? loop_timed(sub { my $v = $values[ $i++ % @values ]; my $r = $comp->(@$v) })
                : loop_timed(sub { my $r = $decomp->($stored[ $i++ % @stored ]) });
        },
    };
}
sub zstd_check {
    my ($impl) = @_;
    my ($comp, $decomp) = @{ $ZSTD_WAY{ $impl->{label} } };
    my ($stored, $raw) = (0, 0);
    for my $v (held_out()) {
        my $c = $comp->(@$v);
        return "$v->[0]: compress returned undef" unless defined $c;
        my $back = $decomp->($c);
        return "$v->[0]: does not decompress to the value" unless defined $back && $back eq $v->[1];
        $stored += length $c;
        $raw += length $v->[1];
    }
    return (undef, size => $stored, raw => $raw);
}
sub zstd_sizes {
    my ($row) = @_;
    join '; ', map { "$_->{label} $_->{info}{size} B" } grep { $_->{info} && $_->{info}{size} } @{ $row->{impls} };
}
for my $spec (
    # The whole corpus, half of it prose HTML: one-schema values alone
    # (JSON, templated HTML) reach 8x, 3x and 0.40 (bench/README.md). The
    # speed bars leave room for a loaded machine: with both cores busy
    # with other work, 3.2 to 3.8x and 1.8 to 2.0x against 4.9x and 2.5x.
    [ 'compress, zstd + dictionary', 'zstd + dictionary', 'compress',
      [ at_least(3), { kind => 'ratio', min => 1.6, vs => 'our memGzip' }, { kind => 'size', max => 0.55, vs => 'our memGzip' } ] ],
    [ 'compress, zstd', 'zstd', 'compress', [ { kind => 'size', max => 1.08, vs => 'our memGzip' } ] ],
    [ 'decompress, zstd + dictionary', 'zstd + dictionary', 'decompress', [ { kind => 'ratio', min => 1.3, vs => 'our memGunzip' } ] ],
    [ 'decompress, zstd', 'zstd', 'decompress', [] ],
) {
    my ($label, $ours, $dir, $bars) = @$spec;
    (my $name = "zstd $label") =~ s/,//g;
    my @base = ('Compress::Zlib memGzip', 'our memGzip');
    push @ROWS, {
        group => 'zstd', name => $name, label => $label, bars => $bars,
        setup => \&corpus_setup,
        impls => [ (map { my $i = zstd_impl($_, 'baseline', $dir); $i->{label} =~ s/memGzip/memGunzip/ if $dir eq 'decompress'; $i } @base),
                   zstd_impl($ours, 'ours', $dir) ],
        check => sub {
            my ($impl) = @_;
            (my $way = $impl->{label}) =~ s/memGunzip/memGzip/;
            zstd_check({ %$impl, label => $way });
        },
        notes => $dir eq 'compress' ? \&zstd_sizes : undef,
    };
}

# Fast get_multi of 100 held-out values, each client reading what it wrote.
my @ZFAST_KEYS = map { sprintf 'z%03d', $_ } 0 .. 99;
my %zfast_stored;
my @ZFASTS = (
    { label => 'Fast default (gzip)', role => 'baseline', ns => 'default', methods => sub { () } },
    { label => 'our gzip', role => 'baseline', ns => 'gzip', missing => $MISSING{$OUR_ZLIB},
      methods => sub { (compress_methods => $OUR_ZLIB->can('compress_methods')->()) } },
    { label => 'zstd + dictionary', role => 'ours', ns => 'zstd', missing => $MISSING{$OUR_ZSTD},
      methods => sub { (compress_methods => $OUR_ZSTD->can('compress_methods')->(dictionary => $ALL_DICT_FILE)) } },
);
$_->{missing} //= $MISSING{'Cache::Memcached::Fast'} // $NO_CORPUS for @ZFASTS;
sub zfast_values { my @v = held_out(); map { $v[$_]->[1] } 0 .. $#ZFAST_KEYS }
sub zfast_client {
    my ($impl) = @_;
    return Cache::Memcached::Fast->new({
        servers => servers(), namespace => "${NS}zf:$impl->{ns}:", compress_threshold => 100, $impl->{methods}->(),
    });
}
push @ROWS, {
    group => 'zstd-fast', name => 'zstd fast get_multi 100', label => 'get_multi 100 values',
    bars  => [],
    setup => \&corpus_setup,
    impls => [ map {
        +{ %$_, build => sub {
            my ($impl) = @_;
            my $memd = $impl->{memd} = zfast_client($impl);
            unless ($zfast_stored{ $impl->{ns} }++) {
                my @v = zfast_values();
                $memd->set($ZFAST_KEYS[$_], $v[$_], 3600) or die "Fast set failed\n" for 0 .. $#ZFAST_KEYS;
            }
            loop_timed(sub { my $h = $memd->get_multi(@ZFAST_KEYS) });
        } };
    } @ZFASTS ],
    check => sub {
        my ($impl) = @_;
        my @v = zfast_values();
        CMRXBench::Parse::compare_values($impl->{memd}->get_multi(@ZFAST_KEYS), { map { $ZFAST_KEYS[$_] => $v[$_] } 0 .. $#ZFAST_KEYS });
    },
};

# ---- a recorded run ----------------------------------------------------------

# --report FILE: print and draw a run recorded in FILE (a latest.json) again,
# running nothing; with --check, judged by the bars of this version.
if (defined $REPORT) {
    report_recorded($REPORT);
    exit 0;
}

sub report_recorded {
    my ($file) = @_;
    require JSON::PP;
    open my $fh, '<:raw', $file or die "$file: $!\n";
    my $run = eval { JSON::PP->new->utf8->decode(do { local $/; <$fh> }) };
    (my $why = $@) =~ s/,? at \S+ line \d+\.?\n?\z//;
    die "$file: not a recorded run: " . ($why || "not a JSON object") . "\n" unless ref $run eq 'HASH';
    my %row_named = map { ($_->{name} => $_) } @ROWS;
    my @rows;
    for my $recorded (@{ $run->{rows} || [] }) {
        my $row = $row_named{ $recorded->{name} }
            or die "$file: '$recorded->{name}' is not a row of this benchmark\n";
        push @rows, {
            (map { ($_ => $row->{$_}) } qw(group name label notes)),
            bars  => [ map { +{%$_} } @{ $row->{bars} || [] } ],
            impls => [ map { +{
                label  => $_->{label}, role => $_->{role}, status => $_->{status}, detail => $_->{detail},
                median => $_->{median_seconds}, samples => $_->{samples}, info => $_->{info},
            } } @{ $recorded->{impls} } ],
        };
    }
    die "$file: no rows\n" unless @rows;
    evaluate(@rows);
    $run->{check} = $CHECK;
    print_table(\*STDOUT, $run, \@GROUPS, @rows);
    my $out = "$FindBin::Bin/results";
    File::Path::make_path($out);
    write_svg("$out/report.svg", $run, \@GROUPS, @rows);
    print $CHECK ? "recorded in $file, judged by today's bars (a recorded run is not measured again); chart: bench/results/report.svg\n"
                 : "recorded in $file; chart: bench/results/report.svg\n";
}

# ---- run -------------------------------------------------------------------

@ROWS = grep { $_->{name} =~ /$FILTER/ } @ROWS if defined $FILTER && length $FILTER;
die "BENCH_FILTER '$FILTER' matches no row\n" unless @ROWS;

my $tty = -t STDERR;
my ($shown, $last_row) = (0, 0);
my $runner = CMRXBench::Runner->new(
    rounds   => $ROUNDS,
    seconds  => $SECONDS,
    progress => sub {
        my ($i, $n, $row, $what) = @_;
        if ($tty) {
            my $line = substr("[row $i/$n] $row->{name} $what ...", 0, 110);
            print STDERR "\r$line", ' ' x ($shown > length $line ? $shown - length $line : 0);
            $shown = length $line;
        } elsif ($i != $last_row) {
            print STDERR "[row $i/$n] $row->{name}\n";
            $last_row = $i;
        }
    },
);
$runner->run_row($ROWS[$_], $_ + 1, scalar @ROWS) for 0 .. $#ROWS;
evaluate(@ROWS);
measure_misses_again() if $CHECK;
print STDERR "\r", ' ' x $shown, "\r" if $tty;

# --check is noise-aware: a row whose speed bar is missed is measured again
# (its implementations interleaved in every round, as the first time), and
# a bar counts as missed only when it misses again. A wrong or failing
# implementation is no noise: it is not measured again.
sub measure_misses_again {
    my @again = grep {
        my $row = $_;
        (_ours_status($row) eq 'ok') && grep { defined $_->{met} && !$_->{met} } @{ $row->{bars} || [] };
    } @ROWS;
    for my $i (0 .. $#again) {
        my $row = $again[$i];
        my %first = map { ($_ => $row->{bars}[$_]{value}) }
                    grep { defined $row->{bars}[$_]{met} && !$row->{bars}[$_]{met} } 0 .. $#{ $row->{bars} };
        for my $impl (@{ $row->{impls} }) {
            delete @$impl{qw(status detail info iterations samples median)};
        }
        $runner->run_row($row, $i + 1, scalar @again);
        evaluate($row);
        $row->{bars}[$_]{first_value} = $first{$_} for keys %first;
    }
}
sub _ours_status { (map { $_->{status} // '' } grep { $_->{role} eq 'ours' } @{ $_[0]{impls} })[0] // '' }

# ---- report ----------------------------------------------------------------

sub machine {
    my %m = (cores => 0, cpu => 'unknown');
    if (open my $fh, '<', '/proc/cpuinfo') {
        while (<$fh>) {
            $m{cores}++ if /^processor\s*:/;
            $m{cpu} = $1 if /^model name\s*:\s*(.+?)\s*$/;
        }
    }
    if (open my $fh, '<', '/proc/meminfo') {
        while (<$fh>) { $m{memory_kb} = $1 + 0 if /^MemTotal:\s*(\d+)/ }
    }
    my @u = POSIX::uname();
    @m{qw(os kernel arch)} = @u[0, 2, 4];
    return \%m;
}

sub version_of { my $m = shift; no strict 'refs'; $MISSING{$m} // ${"${m}::VERSION"} // 'unknown' }

my %meta = (
    date     => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime),
    perl     => sprintf('%vd', $^V),
    machine  => machine(),
    rounds   => $ROUNDS,
    seconds  => $SECONDS + 0,
    quick    => $QUICK,
    filter   => $FILTER,
    servers  => $SERVERS,
    servers_desc => $SERVERS ? "$SERVERS_DESC (" . join(', ', @$SERVERS) . ')' : 'not used',
    memcached_version => $SERVERS ? server_version($SERVERS->[0]) : undef,
    modules  => {
        'Cache::Memcached' => "$Cache::Memcached::VERSION",
        'Compress::Zlib'   => "$Compress::Zlib::VERSION",
        zlib               => Compress::Zlib::zlib_version(),
        map { $_ => "" . version_of($_) } grep { $_ ne 'Cache::Memcached::GetParser' } keys %MISSING,
    },
    load_errors => \%LOAD_ERROR,
    check    => $CHECK,
);

print_table(\*STDOUT, \%meta, \@GROUPS, @ROWS);
for my $m (sort keys %LOAD_ERROR) { print "note: $m: $LOAD_ERROR{$m}\n" }

my $out = "$FindBin::Bin/results";
File::Path::make_path($out);
my $no_json = write_json("$out/latest.json", \%meta, @ROWS);
write_svg("$out/latest.svg", \%meta, \@GROUPS, @ROWS);
print $no_json ? "results: bench/results/latest.svg (no latest.json: $no_json)\n"
               : "results: bench/results/latest.json, bench/results/latest.svg\n";
exit(bar_counts(@ROWS)->{missed} ? 1 : 0) if $CHECK;
