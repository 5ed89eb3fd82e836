#!/usr/bin/perl
# bin/cmrx-dict against a real memcached holding the shipped corpus
# (bench/data/values), stored as the clients store it: raw, gzipped, zlib,
# zstd (all flagged F_COMPRESS), Storable (F_STORABLE), Storable gzipped.
# report's numbers must equal those computed here from the originals (so
# every stored form was decoded, and the held-out split is the documented
# one); train writes a dictionary that load_dictionary and the zstd command
# use, the same from the server, from files and from standard input; and
# the errors exit with their documented statuses.
#
# Needs memcached 1.4.31 or later with its LRU crawler (lru_crawler
# metadump); skips without it (fails with CMRX_REQUIRE_MEMCACHED=1). The
# --json cases need JSON::PP (core from perl 5.14); without it, --json must
# say so.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use IO::Socket::INET ();
use Compress::Zlib ();
use Storable ();
use Cache::Memcached::RustXS::Zstd qw(compress decompress train_dictionary load_dictionary);

use Cache::Memcached::RustXS::Dict qw(held_out_split);
use Cache::Memcached::RustXS::Dict::Measure ();
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::Tune ();
use Cache::Memcached::RustXS::Dict::CLI ();
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Memcached;
use CMRXTest::DictSets qw(run_dict @FIXED_TUNING %FIXED_TUNING);
use CMRXTest::Peers qw(slurp spew);
use CMRXTest::Raw qw(raw_request raw_set);

my $server = CMRXTest::Memcached->start_or_skip;
my $ADDR   = $server->address;
{
    my $reply = raw_request($ADDR, "lru_crawler metadump all\r\n",
                            qr/(?:\A|\n)(?:END|[A-Z_]*ERROR[^\n]*)\r\n\z/);
    plan skip_all => "this memcached cannot list its keys (lru_crawler metadump all: "
                   . (length $reply ? substr($reply, 0, 60) : 'no answer') . '): 1.4.31 or later is needed'
        unless $reply eq "END\r\n";
}

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $TMP       = File::Temp::tempdir(CLEANUP => 1);

# ---- helpers ---------------------------------------------------------------

sub sum_length { my $n = 0; $n += length for @_; $n }

# A dictionary trained here, loaded here; its ID.
sub load_trained {
    my ($samples, $name) = @_;
    my $file = spew(File::Spec->catfile($TMP, $name), train_dictionary($samples, size => 16384));
    return ($file, load_dictionary($file));
}

my $expected_dictionaries = 0;    # loaded by expected_held_out, each under an ID of its own

# What report and train must find for these values (in key order): the
# held-out half is the odd positions, the dictionary is tuned on the even
# (the prefix's keys counted, without speed limits, with the tuning
# options given: %FIXED_TUNING as the commands given @FIXED_TUNING, or
# none for a full tuning) at its level.
sub expected_held_out {
    my ($tuning, $keys, @values) = @_;
    my ($train, $held) = held_out_split(\@values, $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    my @train = @$train;
    my @held  = @$held;
    my %e = (values => scalar @held, raw => sum_length(@held),
             gzip => sum_length(map { Compress::Zlib::memGzip($_) } @held),
             zstd => sum_length(map { compress($_, level => 3) } @held));
    my $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server(Cache::Memcached::RustXS::Dict::NodeReader->connect($ADDR));
    my $t = Cache::Memcached::RustXS::Dict::Tune::tune(samples => [ map { [ $keys->[ 2 * $_ ], $train[$_] ] } 0 .. $#train ],
                                                       keys => scalar @$keys, memory => $memory,
                                                       compress_time => 0, decompress_time => 0, %$tuning);
    if (defined $t->{dictionary}) {
        my $file = spew(File::Spec->catfile($TMP, "expected-" . (0 + @train) . "-" . length($held[0]) . ".dict"),
                              Cache::Memcached::RustXS::Zstd::dictionary_with_id($t->{dictionary}, 0x7d00_0000 + ++$expected_dictionaries));
        my $id = load_dictionary($file);
        $e{dict} = sum_length(map { compress($_, level => $t->{choice}{level}, dictionary => $id) } @held);
        $e{choice} = $t->{choice};
    }
    return \%e;
}

# A set in the binary protocol (which takes keys the text protocol cannot
# name); true when stored.
sub binary_set {
    my ($key, $value) = @_;
    my $extras = pack 'NN', 0, 0;
    my $body = $extras . $key . $value;
    my $request = pack('CCnCCnNNa8', 0x80, 0x01, length $key, length $extras, 0, 0,
                       length $body, 0, "\0" x 8) . $body;
    my $reply = raw_request($ADDR, $request, qr/\A.{24}/s);
    return length $reply >= 24 && unpack('x6 n', $reply) == 0;
}

# Rows of one table of report's text output, under the heading that
# starts with $title: prefix => [cells].
sub table_rows {
    my ($text, $title) = @_;
    my ($block) = $text =~ /^\Q$title\E[^\n]*\n(?:[^\n]*[^\s\n][^\n]*\n)*?((?:  [^\n]*\n)+)/m
        or return {};
    my @lines = split /\n/, $block;
    shift @lines;    # the header
    return { map { my @c = split ' ', $_; (shift(@c) => \@c) } @lines };
}

# ---- the data ----------------------------------------------------------------

my $corpus = corpus_values('bench/data/values');
my @FAMILIES = sort keys %$corpus;
is scalar @FAMILIES, 7, 'the corpus has its seven families';

# Each value stored in one of six forms, in turn; what the clients would
# compress is kept in %decoded (Storable's frozen bytes for Storable values).
my (%decoded, %stored_bytes, %compressed, %storable);
for my $family (@FAMILIES) {
    my $i = 0;
    for my $kv (@{ $corpus->{$family} }) {
        my ($key, $value) = @$kv;
        my $form = $i++ % 6;
        my ($flags, $data, $plain) = (0, $value, $value);
        if    ($form == 1) { ($flags, $data) = (2, Compress::Zlib::memGzip($value)) }
        elsif ($form == 2) { ($flags, $data) = (2, compress($value, level => 3)) }
        elsif ($form == 3) { ($flags, $data) = (2, Compress::Zlib::compress($value)) }
        elsif ($form == 4) { $plain = Storable::nfreeze(\$value); ($flags, $data) = (1, $plain) }
        elsif ($form == 5) { $plain = Storable::nfreeze([$value]); ($flags, $data) = (3, Compress::Zlib::memGzip($plain)) }
        raw_set($ADDR, $key, $flags, $data) or die "set $key failed";
        $decoded{$family}{$key} = $plain;
        $stored_bytes{$family} += length $data;
        $compressed{$family}++ if $flags & 2;
        $storable{$family}++ if $flags & 1;
    }
}

# Values that do not decode: flagged compressed but plain, and broken gzip.
raw_set($ADDR, 'bad:plain', 2, 'this was never compressed') or die;
raw_set($ADDR, 'bad:gzip', 2, "\x1f\x8b\x08\x00" . ('x' x 40)) or die;
# Values compressed with a dictionary that report loads only when told.
my @dz = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"],"score":) . ($_ * 7 % 100) . '}' } 1 .. 200;
my ($dz_file, $dz_id) = load_trained(\@dz, 'dz.dict');
raw_set($ADDR, sprintf('dz:%03d', $_), 2, compress($dz[$_], level => 3, dictionary => $dz_id)) or die
    for 0 .. 19;
# Too few for a dictionary; a key without the delimiter; one a text get cannot name.
raw_set($ADDR, "tiny:$_", 0, "a tiny value number $_") or die for 1 .. 3;
raw_set($ADDR, 'nodelimiter', 0, 'a value whose key has no colon') or die;
my $have_odd_key = binary_set('odd key', 'stored through the binary protocol');

# ---- report ------------------------------------------------------------------

# Tests never depend on timings: where the tuner's choice decides, it runs
# without speed limits. The reports tune with @FIXED_TUNING (one size, two
# levels, two methods): what they show is checked against the same tuning
# here; train --server tunes in full, and writes the tuner's choice.
my @NO_LIMITS = ('--compress-time', '0', '--decompress-time', '0');
my ($status, $out, $err) = run_dict([ 'report', '--server', $ADDR, @FIXED_TUNING, @NO_LIMITS ]);
is $status, 0, 'report: exit status 0' or diag $err;
is $err, '', 'report: nothing on stderr (it is not a terminal)';
like $out, qr/^cmrx-dict report of \Q$ADDR\E: \d+ keys listed, 11 prefixes \(delimiter ':'\), up to 1000 sampled each$/m, 'report: the summary line';
my $stored = table_rows($out, 'Stored');
my $held   = table_rows($out, 'Held-out half, bytes');
my $times  = table_rows($out, 'Held-out half, microseconds');
my %expect;
for my $family (@FAMILIES) {
    my @keys = sort keys %{ $decoded{$family} };
    my $e = $expect{$family} = expected_held_out(\%FIXED_TUNING, \@keys, map { $decoded{$family}{$_} } @keys);
    my $n = @keys;
    is_deeply $stored->{$family},
        [ $n, $stored->{$family}[1], $n, $stored_bytes{$family},
          sprintf('%d%%', int(100 * $compressed{$family} / $n + 0.5)),
          sprintf('%d%%', int(100 * $storable{$family} / $n + 0.5)), 0 ],
        "report: $family: keys, sampled, stored bytes, compressed and Storable shares";
    cmp_ok $stored->{$family}[1], '>', $stored_bytes{$family}, "report: $family: item bytes exceed the values'";
    my $row = $held->{$family} || [];
    is_deeply [ @$row[0 .. 4] ], [ @{$e}{qw(values raw gzip zstd dict)} ],
        "report: $family: held-out values, raw, gzip, zstd and zstd+dict bytes as computed from the originals";
    is $row->[6], sprintf('%.3f', $e->{dict} / $e->{gzip}), "report: $family: dict/gzip";
    like join(' ', @{ $times->{$family} || [] }), qr{\A(?:\d+\.\d / \d+\.\d ?){3}\z},
        "report: $family: microseconds for the three";
}
for my $family (qw(compat gh npm)) {    # JSON
    cmp_ok $held->{$family}[4], '<', 0.6 * $held->{$family}[3],
        "report: $family (JSON): the dictionary saves over 40 % of plain zstd";
}
is_deeply $stored->{bad}, [ 2, $stored->{bad}[1], 2, 25 + 44, '100%', '0%', 2 ], 'report: bad: both skipped';
is_deeply $held->{bad}, [ 0, ('-') x 7 ], 'report: bad: nothing to measure';
is $stored->{dz}[6], 20, 'report: dz: values with a dictionary not loaded are skipped';
is $held->{tiny}[0], 1, 'report: tiny: one held-out value';
is $held->{tiny}[4], '-', 'report: tiny: no dictionary';
is $stored->{'(none)'}[0], $have_odd_key ? 2 : 1, 'report: keys without the delimiter are in (none)';
like $out, qr/^  bad: 1 value flagged compressed, but not gzip, zlib or zstd; 1 value gzip that does not decompress$/m,
    'report: notes say why values were skipped';
like $out, qr/^  dz: 20 values zstd, with dictionary $dz_id, which is not loaded \(--dictionary\)/m,
    'report: ... naming the dictionary missing';
like $out, qr/^  tiny: [^\n]*no dictionary from 2 values \(\d+ bytes\): [^\n]*few hundred/m,
    'report: ... and why a prefix has no dictionary';
SKIP: {
    skip 'the binary protocol set failed', 1 unless $have_odd_key;
    like $out, qr/^  \(none\): 1 key a text-protocol get cannot name/m, 'report: keys get cannot name are counted';
}
my ($total) = $out =~ /^  total  (.*)$/m;
my @total = split ' ', $total || '';
my %sum;
my $tiny = expected_held_out(\%FIXED_TUNING, [ map { "tiny:$_" } 1 .. 3 ], map { "a tiny value number $_" } 1 .. 3);
for my $e (values %expect, $tiny) { $sum{$_} += $e->{$_} || 0 for qw(values raw gzip zstd dict) }
is_deeply [ @total[0 .. 4] ], [ @sum{qw(values raw gzip zstd dict)} ],
    'report: the total row (with tiny, which has no dictionary)';

($status, $out, $err) = run_dict([ 'report', '--server', $ADDR, '--dictionary', $dz_file,
                                   '--prefix', 'dz', '--prefix', 'npm', '--sample', '10' ]);
is $status, 0, 'report --dictionary --prefix --sample: exit 0' or diag $err;
$stored = table_rows($out, 'Stored');
is_deeply [ sort keys %$stored ], [qw(dz npm)], '--prefix: only those prefixes';
is_deeply [ @{ $stored->{dz} }[ 0, 2, 6 ] ], [ 20, 10, 0 ], '--dictionary: the values it made are read';
is_deeply [ @{ $stored->{npm} }[ 0, 2 ] ], [ 137, 10 ], '--sample 10: 10 of 137 keys';
is table_rows($out, 'Held-out half, bytes')->{npm}[0], 5, '--sample 10: 5 held out';

{   # A perl without JSON::PP (5.10 and 5.12 have none), made here by
    # hiding it.
    my $hide = File::Spec->catdir($TMP, 'no-json');
    mkdir $_ or die "$_: $!" for $hide, File::Spec->catdir($hide, 'JSON');
    spew(File::Spec->catfile($hide, 'JSON', 'PP.pm'), qq{die "Can't locate JSON/PP.pm (hidden)\\n";\n});
    ($status, $out, $err) = run_dict([ 'report', '--server', $ADDR, '--json' ], perl_args => ["-I$hide"]);
    is $status, 1, 'report --json without JSON::PP: exit 1';
    like $err, qr/\Acmrx-dict: --json needs the module JSON::PP, which is not installed .*\n\z/,
        '... and says so, in one line';
    is $out, '', '... before any output';
}

SKIP: {
    skip 'JSON::PP is not installed (core from perl 5.14)', 7 unless $HAVE_JSON;
    ($status, $out, $err) = run_dict([ 'report', '--server', $ADDR, '--json', @FIXED_TUNING, @NO_LIMITS ]);
    is $status, 0, 'report --json: exit 0' or diag $err;
    my $r = eval { JSON::PP->new->utf8->decode($out) };
    ok $r, 'report --json: parses' or diag $@;
    my %p = map { ($_->{prefix} => $_) } @{ $r->{prefixes} || [] };
    is_deeply { map { my $h = $p{$_}{held_out};
                      ($_ => [ @{$h}{qw(values raw_bytes)}, map { $h->{$_}{bytes} } qw(memGzip zstd zstd_dict) ]) }
                @FAMILIES },
              { map { ($_ => [ @{ $expect{$_} }{qw(values raw gzip zstd dict)} ]) } @FAMILIES },
              'report --json: the held-out numbers, as the text';
    is_deeply { map { ($_ => [ @{ $p{$_} }{qw(keys sampled fetched stored_bytes compressed storable values raw_bytes)} ]) } @FAMILIES },
              { map { my $n = keys %{ $decoded{$_} };
                      ($_ => [ $n, $n, $n, $stored_bytes{$_}, $compressed{$_}, $storable{$_}, $n,
                               sum_length(values %{ $decoded{$_} }) ]) } @FAMILIES },
              'report --json: counts, and every value decoded to what was stored';
    is_deeply $p{bad}{skipped}, { 'flagged compressed, but not gzip, zlib or zstd' => 1,
                                  'gzip that does not decompress' => 1 }, 'report --json: reasons for skipping';
    ok $p{'(none)'} && !$p{'(none)'}{delimited}, 'report --json: (none) is not delimited';
    is $r->{total}{zstd_dict_bytes}, $sum{dict}, 'report --json: total dictionary bytes';
}

# ---- train -------------------------------------------------------------------

my $dict_file = File::Spec->catfile($TMP, 'compat.dict');
($status, $out, $err) = run_dict([ 'train', '--server', $ADDR, '--prefix', 'compat', '--out', $dict_file, @NO_LIMITS ]);
is $status, 0, 'train --server: exit 0' or diag $err;
my @compat_keys = sort keys %{ $decoded{compat} };
my $e = expected_held_out({}, \@compat_keys, map { $decoded{compat}{$_} } @compat_keys);    # in full
like $out, qr/^cmrx-dict train: prefix 'compat' of \Q$ADDR\E: 110 keys listed, 110 sampled, 110 values/m,
    'train: what it read';
like $out, qr/^  gzip -9 +$e->{gzip} /m, 'train: held-out gzip bytes';
like $out, qr/^  zstd -3 +$e->{zstd} /m, 'train: held-out zstd bytes';
like $out, qr/^  zstd\+dict +$e->{dict} +\d\.\d{3} +\d\.\d{3} /m, 'train: held-out zstd+dict bytes';
like $out, qr/^Wrote \Q$dict_file\E: a zstd dictionary of \d+ bytes, ID (\d+), trained on all 110 values/m,
    'train: the dictionary written';
my ($said_id) = $out =~ /, ID (\d+),/;
my $id = eval { load_dictionary($dict_file) };
ok $id, 'train: load_dictionary accepts it' or diag $@;
is $id, $said_id, 'train: with the ID it printed';
# zstd's trainer derives the ID from the dictionary's content (32768 up):
# not a small ID that another dictionary, trained elsewhere, would have too.
cmp_ok $id, '>=', 32768, "train: the ID zstd derives from the content ($id), not a small fixed one";
my ($trained_on_all) = Cache::Memcached::RustXS::Dict::CLI::train_choice(
    [ map { $decoded{compat}{$_} } @compat_keys ], $e->{choice});
is slurp($dict_file), $trained_on_all, "train: the tuner's choice, trained on all the values, in key order";

SKIP: {
    my ($zstd) = grep { -x } map { File::Spec->catfile($_, 'zstd') } File::Spec->path;
    skip 'the zstd command is not installed', 2 unless $zstd;
    my $sample = spew(File::Spec->catfile($TMP, 'sample.json'), $corpus->{compat}[1][1]);
    system($zstd, '-q', '-f', '-D', $dict_file, $sample, '-o', "$sample.zst") == 0
        or die "zstd -D failed";
    is decompress(slurp("$sample.zst")), slurp($sample), 'zstd -D compresses with it';
    system($zstd, '-q', '-d', '-f', '-D', $dict_file, "$sample.zst", '-o', "$sample.back") == 0
        or die "zstd -d -D failed";
    is slurp("$sample.back"), slurp($sample), 'zstd -d -D decompresses with it';
}

($status, $out, $err) = run_dict([ 'train', '--server', $ADDR, '--prefix', 'compat', '--out', $dict_file ]);
is $status, 1, 'train: an existing --out: exit 1';
like $err, qr/\Acmrx-dict: \Q$dict_file\E exists .*--force replaces it\)\n\z/, '... says so in one line';
($status, $out, $err) = run_dict([ 'train', '--server', $ADDR, '--prefix', 'compat', '--out', $dict_file, '--force',
                                   @FIXED_TUNING, @NO_LIMITS ]);
is $status, 0, 'train --force: replaces it' or diag $err;
{
    my $replaced = slurp($dict_file);
    isnt $replaced, $trained_on_all, '... with another dictionary (one size, fewer candidates)';
    isnt Cache::Memcached::RustXS::Zstd::dictionary_id($replaced), $id, '... which has another ID';
}

# The same samples from files, standard input (lines, and NUL-separated):
# the same dictionary (of one size and few candidates, @FIXED_TUNING: the
# input is the point here, not the tuner's search).
my @npm_keys = sort map { $_->[0] } @{ $corpus->{npm} };
my %npm = map { @$_ } @{ $corpus->{npm} };
my @npm = map { $npm{$_} } @npm_keys;
my @files = map { spew(File::Spec->catfile($TMP, sprintf 'npm-%03d.json', $_), $npm[$_]) } 0 .. $#npm;
my %dict_of;
for my $case (['files', [@files]], ['lines', ['-'], join('', map { "$_\n" } @npm) . "\n"],
              ['null', ['--null', '-'], join("\0", @npm)]) {
    my ($name, $args, $stdin) = @$case;
    my $file = File::Spec->catfile($TMP, "npm-$name.dict");
    ($status, $out, $err) = run_dict([ 'train', '--out', $file, @FIXED_TUNING, @NO_LIMITS, @$args ], stdin => $stdin);
    is $status, 0, "train from $name: exit 0" or diag $err;
    like $out, qr/^cmrx-dict train: 137 samples \(\d+ bytes\): /m, "train from $name: 137 samples";
    $dict_of{$name} = -f $file ? slurp($file) : "no file from $name";
}
like $out, qr/^  zstd\+dict +\d+ /m, 'train from files: held-out savings printed';
ok length $dict_of{files} > 1000, 'train from files: a dictionary';
is $dict_of{lines}, $dict_of{files}, 'train from standard input, one sample a line: the same dictionary';
is $dict_of{null}, $dict_of{files}, 'train from standard input, --null: the same dictionary';

SKIP: {
    skip 'JSON::PP is not installed (core from perl 5.14)', 3 unless $HAVE_JSON;
    my $file = File::Spec->catfile($TMP, 'gh.dict');
    ($status, $out, $err) = run_dict([ 'train', '--server', $ADDR, '--prefix', 'gh', '--out', $file, '--json',
                                       @FIXED_TUNING, @NO_LIMITS ]);
    is $status, 0, 'train --json: exit 0' or diag $err;
    my $r = eval { JSON::PP->new->utf8->decode($out) } || {};
    is_deeply [ @{ $r->{held_out} || {} }{qw(values raw_bytes)}, map { $r->{held_out}{$_}{bytes} } qw(memGzip zstd zstd_dict) ],
              [ @{ $expect{gh} }{qw(values raw gzip zstd dict)} ], 'train --json: the held-out numbers';
    is $r->{dictionary}{id}, load_dictionary($file), 'train --json: the dictionary ID';
}

# ---- errors ------------------------------------------------------------------

my $closed_port = do {
    my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp', Listen => 1)
        or die "bind: $@";
    my $port = $sock->sockport;
    close $sock;
    $port;
};
my @errors = (
    [ 'nobody listening', [ 'report', '--server', "127.0.0.1:$closed_port" ], 1,
      qr/\Acmrx-dict: cannot connect to 127\.0\.0\.1:$closed_port: / ],
    [ 'a --server without a port', [ 'report', '--server', 'localhost' ], 2,
      qr/\Acmrx-dict: --server must be HOST:PORT/ ],
    [ 'an unknown option', [ 'report', '--server', $ADDR, '--frobnicate' ], 2,
      qr/\Acmrx-dict: report: unknown option --frobnicate; see cmrx-dict --help\n\z/ ],
    [ 'an unknown subcommand', ['frobnicate'], 2, qr/\Acmrx-dict: unknown subcommand 'frobnicate'/ ],
    [ 'no subcommand', [], 2, qr/\Acmrx-dict: a subcommand is needed/ ],
    [ 'train without --out', [ 'train', '--server', $ADDR, '--prefix', 'npm' ], 2, qr/--out FILE is needed/ ],
    [ 'a bad --sample', [ 'report', '--server', $ADDR, '--sample', 'many' ], 2, qr/--sample must be/ ],
    [ 'too few samples', [ 'train', '--out', File::Spec->catfile($TMP, 'few.dict'), @files[0 .. 2] ], 1,
      qr/\Acmrx-dict: cannot train a dictionary on 3 samples \(\d+ bytes\): .*a few hundred values help\n\z/ ],
    [ 'too few values of a prefix', [ 'train', '--server', $ADDR, '--prefix', 'tiny',
                                      '--out', File::Spec->catfile($TMP, 'tiny.dict') ], 1,
      qr/\Acmrx-dict: cannot train a dictionary on 3 values of prefix 'tiny' \(\d+ bytes\): / ],
    [ 'a prefix with no keys', [ 'train', '--server', $ADDR, '--prefix', 'nosuch',
                                 '--out', File::Spec->catfile($TMP, 'nosuch.dict') ], 1,
      qr/\Acmrx-dict: no key of \Q$ADDR\E has the prefix 'nosuch'/ ],
);
for my $case (@errors) {
    my ($name, $args, $want_status, $want_err) = @$case;
    ($status, $out, $err) = run_dict($args);
    is $status, $want_status, "$name: exit $want_status";
    like $err, $want_err, "$name: the message";
    is $err =~ tr/\n//, 1, "$name: one line";
}
ok !-e File::Spec->catfile($TMP, 'few.dict'), 'no dictionary file after a failure';

($status, $out, $err) = run_dict(['--help']);
is $status, 0, '--help: exit 0';
like $out, qr/^Usage:.*cmrx-dict report --server HOST:PORT.*^Options:.*--delimiter.*^Exit Status:/ms,
    '--help: the synopsis, the options and the exit statuses';
($status, $out) = run_dict([ 'train', '--help' ]);
is $status, 0, 'train --help: exit 0';
like $out, qr/^Usage:/m, 'train --help: the usage';

# A memcached without the LRU crawler cannot list its keys.
{
    my $plain = CMRXTest::Memcached->start(args => [ '-o', 'no_lru_crawler' ]);
    ($status, $out, $err) = run_dict([ 'report', '--server', $plain->address ]);
    is $status, 2, 'no lru_crawler: exit 2';
    like $err, qr/\Acmrx-dict: \S+ cannot list its keys: to 'lru_crawler metadump all' it answered '[^']+' /,
        'no lru_crawler: says so';
    is $err =~ tr/\n//, 1, 'no lru_crawler: one line';
}

# Nothing was written to the server: every value is as it was stored.
my ($sets) = raw_request($ADDR, "stats\r\n", qr/END\r\n\z/) =~ /^STAT cmd_set (\d+)/m;
is $sets, 583 + 2 + 20 + 3 + 1 + ($have_odd_key ? 1 : 0), 'the server saw no set but the test\'s own';

done_testing;
