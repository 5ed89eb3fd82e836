#!/usr/bin/perl
# cmrx-dict's modules (Cache::Memcached::RustXS::Dict::*) without a
# memcached: on the answers a real one gave (t/data/cmrx-dict/transcript,
# recorded by script/record-dict-transcript for the values of
# CMRXTest::DictCorpus) played back from a loopback fake server, on
# scripted bad answers, and on values made here. What the modules make of
# the answers is checked against the original values, measured here with
# Compress::Zlib and zstd directly; and the command's exit statuses and
# messages through Dict::CLI::main and bin/cmrx-dict. t/42 runs the same
# command against a live memcached.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use IO::Socket::INET ();
use POSIX ();
use Compress::Zlib ();
use Storable ();
use Cache::Memcached::RustXS::Zstd qw(compress train_dictionary load_dictionary frame_dictionary_id);
use Cache::Memcached::RustXS::Dict qw(sum_length held_out_split load_dictionary_file load_dictionary_bytes);
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values decode_value);
use Cache::Memcached::RustXS::Dict::Files qw(read_sample_files);
use Cache::Memcached::RustXS::Dict::Measure qw(measure_held_out codecs measure
                                              measure_codec compress_all train);
use Cache::Memcached::RustXS::Dict::Report qw(print_json skipped_note shown text);
use Cache::Memcached::RustXS::Dict::Report::Values qw(report_data train_data print_report print_train);
use Cache::Memcached::RustXS::Dict::CLI ();
use Cache::Memcached::RustXS::Dict::Workers ();
use Cache::Memcached::RustXS::Dict::Progress ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::GetParser ();
use CMRXTest::DictCorpus qw(corpus_items dictionary_samples serve_transcript transcript_replies
                            $TRANSCRIPT $DICTIONARY);
use CMRXTest::FakeServer;
use CMRXTest::Peers qw(slurp spew);

my $TMP = File::Temp::tempdir(CLEANUP => 1);
# Tests never depend on timings: where the tuner's choice decides, it runs
# without speed limits.
my @NO_LIMITS = ('--compress-time', '0', '--decompress-time', '0');

# What train writes: the tuner's choice on the even half, trained on all.
sub tuned_dictionary {
    my ($values, $keys, $count, $memory) = @_;
    my $h = measure_held_out($values, keys => $keys, tune => { memory => $memory, keys => $count,
                                                               compress_time => 0, decompress_time => 0 });
    return (Cache::Memcached::RustXS::Dict::CLI::train_choice($values, $h->{zstd_dict}))[0];
}
my $HAVE_JSON = eval { require JSON::PP; 1 };
my $SERVER = 'Cache::Memcached::RustXS::Dict::NodeReader';

# ---- what the server was given, and what it answered ----------------------------------

my %item = map { ($_->[0] => $_) } corpus_items();
my $replies = transcript_replies();

# The recorded get replies, read by the distribution's parser: key =>
# [flags, data].
my %recorded;
for my $request (grep { /\Aget / } keys %$replies) {
    my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items($replies->{$request});
    $complete or die "unexpected reply to $request";
    $recorded{ $_->[0] } = [ @$_[ 1, 2 ] ] for @$items;
}
# This test's reading of the listing: key => item size.
my %listed;
for my $line (split /\n/, $replies->{"lru_crawler metadump all\r\n"}) {
    my ($key, $size) = $line =~ /\Akey=(\S+) .*\bsize=(\d+)/ or next;
    $key =~ s/%(..)/chr hex $1/ge;
    $listed{$key} = $size;
}

# What a value holds as the clients compress it: the value itself, or for
# Storable values the frozen bytes (as recorded, which thaw to the value).
sub decoded_of {
    my ($key) = @_;
    my ($k, $form, $value) = @{ $item{$key} };
    return $recorded{$key}[1] if $form eq 'storable';
    return Compress::Zlib::memGunzip(my $copy = $recorded{$key}[1]) if $form eq 'storable_gzip';
    return $value;
}

is scalar(keys %listed), scalar(keys %item), 'the recorded listing names every key stored';
is_deeply [ sort grep { !exists $recorded{$_} } keys %item ], [ 'gone:1', 'odd key' ],
    '... and the recorded gets hold all but the deleted key and the one a get cannot name';
{
    my @bad;
    for my $key (sort keys %recorded) {
        my $form = $item{$key}[1];
        next unless $form =~ /\Astorable/;
        my $thawed = Storable::thaw(decoded_of($key));
        my $v = $form eq 'storable' ? $$thawed : $thawed->[0];
        push @bad, $key unless $v eq $item{$key}[2];
    }
    is "@bad", '', 'the recorded Storable values thaw to the originals';
}

# ---- Server ----------------------------------------------------------------------------

my $fake = serve_transcript(extra => { "get gone:1\r\n" => "END\r\n" });
my $ADDR = $fake->address;
{
    my $s = $SERVER->connect($ADDR, timeout => 5);
    is $s->spec, $ADDR, 'connect: spec';
    my %got;
    my $n = $s->each_key(sub { $got{ $_[0] } = $_[1] });
    is $n, scalar(keys %item), 'each_key: every key listed';
    is_deeply \%got, \%listed, '... URL-decoded, with its item size';
    ok exists $got{'odd key'}, '... a key with a space among them';
    my $user = $s->get_multi([ map { sprintf 'user:%03d', $_ } 1 .. 100 ]);
    is scalar(keys %$user), 100, 'get_multi: 100 values';
    is_deeply $user->{'user:007'}, $recorded{'user:007'}, '... each [flags, data] as the server sent it';
    is Compress::Zlib::memGunzip(my $gz = $user->{'user:001'}[1]), $item{'user:001'}[2],
        '... the gzipped one gunzips to the original';
    is_deeply $s->get_multi(['gone:1']), {}, 'get_multi: a key not there is left out';
    my $settings = $s->settings;
    is $settings->{item_size_max}, 1048576, 'settings: item_size_max';
    is $settings->{growth_factor}, '1.25', 'settings: growth_factor';
    # memcached's classes: 96 bytes and then each 1.25 times the last,
    # 8-byte aligned (this test's own computation of them).
    my @series = (96);
    while ($series[-1] < 1048576 / 2) {
        my $next = int($series[-1] * 1.25);
        $next += 8 - $next % 8 if $next % 8;
        push @series, $next;
    }
    my %in_series = map { ($_ => 1) } @series;
    my @chunks = $s->slab_chunk_sizes;
    ok @chunks >= 2, 'slab_chunk_sizes: the classes in use (' . join(', ', @chunks) . ')';
    is_deeply [ grep { !$in_series{$_} } @chunks ], [], "... each one of memcached's chunk sizes";
    is_deeply \@chunks, [ sort { $a <=> $b } @chunks ], '... ascending';
    my $classes = $s->slab_classes;
    is_deeply [ map { $_->{chunk_size} } @$classes ], \@chunks, 'slab_classes: the same classes';
    ok $classes->[0]{class} >= 1 && defined $classes->[0]{chunks_per_page}, '... with their statistics';
    like $s->stats('slabs')->{active_slabs}, qr/\A\d+\z/, 'stats(slabs): the raw statistics';
    $s->close;
}

# The reader of get responses the modules use, alone.
{
    my $frame = $recorded{'dz:01'}[1];    # names a dictionary this process has not loaded
    my @warnings;
    local $SIG{__WARN__} = sub { push @warnings, @_ };
    my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items(
        "VALUE dz:01 2 " . length($frame) . "\r\n$frame\r\nVALUE b 0 5 77\r\nx\r\nEN\r\nEND\r\n");
    is_deeply [ $items, $complete ], [ [ [ 'dz:01', 2, $frame, undef ], [ 'b', 0, "x\r\nEN", 77 ] ], 1 ],
        'get_response_items: each item as stored (a frame whose dictionary is not loaded too), its cas, END seen';
    is_deeply \@warnings, [], '... and no warning about that dictionary';
    is_deeply [ Cache::Memcached::RustXS::GetParser::get_response_items("VALUE a 0 3\r\nabc\r\nVALUE b 0 9\r\nabc") ],
              [ [ [ 'a', 0, 'abc', undef ] ], 0 ], '... the start of a response: what is whole, and not complete';
    ok !eval { Cache::Memcached::RustXS::GetParser::get_response_items("VALUE a 0 3\r\nabc\r\nEND\r\nx"); 1 },
        '... bytes after END: croaks';
    like $@, qr/\Anot a memcached get response: bytes after END \('x'\) at /, '... with the reason and where';
}

is_deeply $SERVER->parse_address('127.0.0.1:11211'), { spec => '127.0.0.1:11211', host => '127.0.0.1', port => 11211, ipv6 => undef },
    'parse_address: HOST:PORT';
is_deeply $SERVER->parse_address('[::1]:11211'), { spec => '[::1]:11211', host => '::1', port => 11211, ipv6 => 1 },
    'parse_address: [IPv6]:PORT';
is_deeply $SERVER->parse_address('/run/mc.sock'), { spec => '/run/mc.sock', path => '/run/mc.sock' },
    'parse_address: a unix socket';
is_deeply [ map { $SERVER->parse_address($_) } 'localhost', 'host:0', 'host:65536', 'a b:1', '::1:11211', '' ],
    [ (undef) x 6 ], 'parse_address: undef for anything else';

# A server that answers wrongly: every failure is one line naming it.
sub fails_like {
    my ($code, $kind, $re, $name) = @_;
    my $ok = eval { $code->(); 1 };
    ok !$ok && ref $@ && $@->kind eq $kind, "$name: fails ($kind)" or diag $@;
    like "$@", $re, "$name: $re";
}
{
    my $closed_port = do {
        my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1) or die $@;
        my $port = $sock->sockport;
        close $sock;
        $port;
    };
    fails_like(sub { $SERVER->connect("127.0.0.1:$closed_port") }, 'failure',
               qr/\Acannot connect to 127\.0\.0\.1:$closed_port: \S/, 'nobody listening');
    fails_like(sub { $SERVER->connect('nowhere') }, 'failure', qr/not a memcached address/, 'a bad address');

    my @bad = (
        [ 'metadump refused', ["ERROR\r\n"], sub { $_[0]->each_key(sub { }) }, 'unusable',
          qr/\A127\.0\.0\.1:\d+ cannot list its keys: to 'lru_crawler metadump all' it answered 'ERROR' \(memcached 1\.4\.31/ ],
        [ 'an error in the listing', ["key=a exp=-1 size=60\r\nSERVER_ERROR out of memory\r\n"],
          sub { $_[0]->each_key(sub { }) }, 'failure', qr/stopped listing its keys: 'SERVER_ERROR out of memory'/ ],
        [ 'a busy crawler', ["BUSY currently processing crawler request\r\n"],
          sub { local $Cache::Memcached::RustXS::Dict::NodeReader::BUSY_TRIES = 3;
                local $Cache::Memcached::RustXS::Dict::NodeReader::BUSY_WAIT = 0.01;
                $_[0]->each_key(sub { }) }, 'failure', qr/the LRU crawler of \S+ stayed busy for 0\.03 s: 'BUSY/ ],
        [ 'an error to a get', ["SERVER_ERROR out of memory\r\n"], sub { $_[0]->get_multi(['a']) }, 'failure',
          qr/answered a get with a bad response: server replied SERVER_ERROR \('SERVER_ERROR out of memory'\)\z/ ],
        [ 'a value without its CRLF', ["VALUE a 0 3\r\nabcXYEND\r\n"], sub { $_[0]->get_multi(['a']) }, 'failure',
          qr/answered a get with a bad response: data block not followed by \\r\\n \('the two bytes after the value of a'\)/ ],
        [ 'a line too long', [ 'SERVER_ERROR ' . 'x' x 70_000 ], sub { $_[0]->get_multi(['a']) }, 'failure',
          qr/answered a get with a bad response: response line too long/ ],
        [ 'bytes after END', ["VALUE a 0 3\r\nabc\r\nEND\r\nEND\r\n"], sub { $_[0]->get_multi(['a']) }, 'failure',
          qr/answered a get with a bad response: bytes after END \('END'\)/ ],
        [ 'a closed connection', [ "VALUE a 0 10\r\nabc", [ close => 1 ] ], sub { $_[0]->get_multi(['a']) },
          'failure', qr/closed the connection/ ],
        [ 'no answer', [ [ sleep => 3 ] ], sub { $_[0]->get_multi(['a']) }, 'failure',
          qr/did not answer for 0\.3 s \(--timeout\)/ ],
        [ 'stats garbage', ["nonsense\r\n"], sub { $_[0]->stats('settings') }, 'failure',
          qr/answered 'stats settings' with 'nonsense'/ ],
        [ 'settings without a growth factor', ["STAT item_size_max 1048576\r\nEND\r\n"], sub { $_[0]->settings },
          'failure', qr/does not say its growth_factor in 'stats settings'/ ],
    );
    for my $case (@bad) {
        my ($name, $script, $code, $kind, $re) = @$case;
        my $f = CMRXTest::FakeServer->start(script => $script);
        my $s = $SERVER->connect($f->address, timeout => 0.3);
        fails_like(sub { $code->($s) }, $kind, $re, $name);
        $s->close;
        $f->stop;
    }
}

# ---- Sample ----------------------------------------------------------------------------

{   # The sampler alone, on listings made here.
    my $sample = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 10);
    my @order = map { sprintf 'k:%04d', ($_ * 7919) % 1000 } 0 .. 999;    # a listing order not sorted
    my %index = map { ($order[$_] => $_) } 0 .. $#order;
    $sample->add_key($_, 50) for @order;
    $sample->add_key("k:with space", 50);
    $sample->add_key("plain", 70);
    $sample->add_key("/:x", 80);
    my $l = $sample->listing;
    is $l->{keys}, 1003, 'sampler: every key counted';
    is $l->{unfetchable}, 1, '... one a get cannot name';
    my $k = $l->{groups}{k};
    is_deeply [ @{$k}{qw(keys item_bytes unfetchable delimited)} ], [ 1001, 50_050, 1, 1 ], '... the group k';
    my @s = @{ $k->{sample} };
    is scalar @s, 10, '... a sample of 10';
    is_deeply \@s, [ sort @s ], '... sorted';
    my @at = sort { $a <=> $b } map { $index{$_} } @s;
    my @gaps = map { $at[$_] - $at[ $_ - 1 ] } 1 .. $#at;
    is_deeply [ grep { $_ < 50 || $_ > 200 } @gaps ], [],
        '... spread evenly over the listing (gaps ' . join(' ', @gaps) . '), not its first keys';
    ok $at[0] < 200 && $at[-1] > 800, '... from its start to its end';
    is $l->{groups}{'(none)'}{keys}, 1, 'a key without the delimiter: group (none)';
    ok !$l->{groups}{'(none)'}{delimited}, '... not delimited';
    is $l->{groups}{'/'}{keys}, 1, 'a prefix of one character';

    my $again = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 10);
    $again->add_key($_, 50) for @order;
    is_deeply $again->listing->{groups}{k}{sample}, \@s, 'the same listing gives the same sample';

    my $only = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => '-', per_prefix => 5, prefixes => ['a']);
    $only->add_key($_, 1) for qw(a-1 a-2 b-1 c a-3);
    my $ol = $only->listing;
    is_deeply [ sort keys %{ $ol->{groups} } ], ['a'], 'prefixes: only those groups (delimiter -)';
    is_deeply [ $ol->{keys}, $ol->{groups}{a}{sample} ], [ 5, [qw(a-1 a-2 a-3)] ], '... all keys counted';
}

my %group;    # the groups of the recorded listing, with their values fetched
my %values_of;
{
    my $s = $SERVER->connect($ADDR);
    my @progress;
    my $listing = list_keys($s, delimiter => ':', per_prefix => 1000, progress => sub { push @progress, $_[0] });
    is_deeply \@progress, [0], 'list_keys: progress at the start (and every 10,000 keys)';
    is $listing->{keys}, scalar(keys %item), 'list_keys: every key';
    is $listing->{unfetchable}, 1, '... one a get cannot name';
    my %want_keys;
    for my $key (keys %item) {
        my $prefix = $key =~ /\A([^:]*):/ ? $1 : '(none)';
        $want_keys{$prefix}{$key} = 1;
    }
    is_deeply [ sort keys %{ $listing->{groups} } ], [ sort keys %want_keys ], '... grouped by prefix';
    for my $prefix (sort keys %want_keys) {
        my $g = $listing->{groups}{$prefix};
        my @keys = sort keys %{ $want_keys{$prefix} };
        my $items = 0;
        $items += $listed{$_} for @keys;
        is_deeply [ $g->{keys}, $g->{item_bytes}, $g->{sample} ],
                  [ scalar @keys, $items, [ grep { !/ / } @keys ] ], "list_keys: $prefix: keys, item bytes, sample";
    }
    for my $prefix (sort grep { $_ ne 'dz' } keys %want_keys) {
        my @fetch;
        $values_of{$prefix} = fetch_values($s, $listing->{groups}{$prefix}, progress => sub { push @fetch, "@_" });
        $group{$prefix} = $listing->{groups}{$prefix};
        my $n = @{ $group{$prefix}{sample} };
        is $fetch[-1], "$n $n", "fetch_values: $prefix: progress" if $n;
    }
    $group{dz} = $listing->{groups}{dz};
    $values_of{dz} = fetch_values($s, $group{dz});    # before its dictionary is loaded
    $s->close;

    my %user = map { ($_ => 1) } grep { /\Auser:/ } keys %item;
    is_deeply $values_of{user}, [ map { decoded_of($_) } sort keys %user ],
        'fetch_values: user: every value decoded (gzip, zlib, zstd; Storable kept frozen), in key order';
    my $u = $group{user};
    my $stored = 0;
    $stored += length $recorded{$_}[1] for keys %user;
    is_deeply [ @{$u}{qw(fetched gone undecodable values)}, $u->{stored_bytes}, $u->{raw_bytes} ],
              [ 120, 0, 0, 120, $stored, sum_length($values_of{user}) ], '... its counts';
    is_deeply [ @{$u}{qw(compressed storable)} ],
              [ scalar(grep { $recorded{$_}[0] & 2 } keys %user), scalar(grep { $recorded{$_}[0] & 1 } keys %user) ],
              '... compressed and Storable values counted by their flags';
    is_deeply $values_of{page}, [ map { decoded_of($_) } sort grep { /\Apage:/ } keys %item ], 'page: decoded';
    is_deeply [ @{ $group{gone} }{qw(fetched gone values)} ], [ 0, 1, 0 ], 'gone: a key gone before the get';
    is_deeply [ @{ $group{'(none)'} }{qw(keys unfetchable fetched values)} ], [ 2, 1, 1, 1 ],
        '(none): the key a get cannot name is counted, not fetched';
    is_deeply $group{bad}{skip_reasons}, {
        'flagged compressed, but not gzip, zlib or zstd' => 1, 'gzip that does not decompress' => 1,
        'zlib that does not decompress' => 1, 'zstd that does not decompress (corrupt, or too large)' => 1,
    }, 'bad: why each value was skipped';
    my $dz_id = unpack 'V', substr(slurp($DICTIONARY), 4, 4);    # the ID in the dictionary's header
    is_deeply [ $group{dz}{undecodable}, $group{dz}{skip_reasons} ],
              [ 10, { "zstd, with dictionary $dz_id, which is not loaded (--dictionary)" => 10 } ],
              "dz: frames naming a dictionary not loaded ($dz_id)";
}

# decode_value on values made here.
{
    my $v = 'a value';
    my $frame = compress($v);
    is_deeply [ decode_value(0, $frame) ], [$frame], 'decode_value: not flagged compressed: as it is';
    is_deeply [ decode_value(1, 'frozen') ], ['frozen'], '... Storable alone: as it is';
    is_deeply [ map { [ decode_value($_->[0], $_->[1]) ] } [ 2, Compress::Zlib::memGzip($v) ],
                [ 2, Compress::Zlib::compress($v, 3) ], [ 2, $frame ], [ 3, Compress::Zlib::memGzip('fz') ] ],
              [ [$v], [$v], [$v], ['fz'] ], '... gzip, zlib, zstd, Storable gzipped: decoded';
    is_deeply [ decode_value(2, 'plain') ], [ undef, 'flagged compressed, but not gzip, zlib or zstd' ],
        '... not compressed after all: why';
}

# read_sample_files
{
    my @files = map { spew("$TMP/s$_", "sample $_"); "$TMP/s$_" } 1 .. 3;
    spew("$TMP/empty", '');
    is_deeply read_sample_files([ @files, "$TMP/empty" ]),
              { values => [ map { "sample $_" } 1 .. 3 ], files => 4, stdin => 0, empty => 1 },
              'read_sample_files: each file a sample, empty ones skipped';
    for my $case ([ lines => "one\ntwo\n\nthree\n", 0, [qw(one two three)], 1 ],
                  [ NULs  => "a\nb\0c\0\0d", 1, [ "a\nb", 'c', 'd' ], 1 ]) {
        my ($name, $input, $null, $want, $empty) = @$case;
        spew("$TMP/stdin", $input);
        open my $saved, '<&', \*STDIN or die $!;
        open STDIN, '<', "$TMP/stdin" or die $!;
        my $r = read_sample_files([ $files[0], '-' ], null => $null);
        open STDIN, '<&', $saved or die $!;
        is_deeply $r, { values => [ 'sample 1', @$want ], files => 1, stdin => scalar @$want, empty => $empty },
            "read_sample_files: standard input, $name";
    }
    fails_like(sub { read_sample_files([$TMP]) }, 'failure', qr/\A\Q$TMP\E is not a file\z/, 'a directory');
    fails_like(sub { read_sample_files(["$TMP/none"]) }, 'failure', qr/\Acannot open \Q$TMP\E\/none: /, 'a missing file');
}

# Keys that start with an ID: past twice max_prefixes groups, those of the
# fewest item bytes are summed into the rest; at the end, only the
# prefixes holding 1/max_prefixes of the item bytes each stay.
{
    my $sample = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 5, max_prefixes => 10);
    for my $i (0 .. 999) {
        $sample->add_key(sprintf('%08x:v', $i * 7919), 100);
        $sample->add_key("cart:$i", 50);
        $sample->add_key("user:$i", 60) if $i % 2;
    }
    ok keys %{ $sample->{groups} } <= 20, 'IDs: at most twice max_prefixes groups tracked at once ('
                                          . scalar(keys %{ $sample->{groups} }) . ')';
    my $l = $sample->listing;
    is_deeply [ sort keys %{ $l->{groups} } ], [qw(cart user)], '... the prefixes that hold the memory stay';
    is $l->{groups}{cart}{keys}, 1000, '... with their keys counted';
    is scalar @{ $l->{groups}{cart}{sample} }, 5, '... and sampled';
    is_deeply [ @{ $l->{rest} }{qw(seen_prefixes prefixes keys item_bytes)} ], [ 1002, 1000, 1000, 100_000 ],
        '... the IDs summed in the rest: prefixes, keys, item bytes';
    is scalar @{ $l->{rest}{examples} }, 3, '... with three examples of their keys';
    like Cache::Memcached::RustXS::Dict::Report::ids_note($l),
        qr/\A1002 prefixes listed, more than --max-prefixes 10: keys that start with an ID \([0-9a-f]{8}:v, .*\); 2 prefixes holding at least 1\/100 of the item bytes are measured, the other 1000 \(1000 keys\) summed in one row\z/,
        '... said in one line';
    my $few = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 5, max_prefixes => 10);
    $few->add_key("p$_:1", 1) for 1 .. 10;
    ok !$few->listing->{rest}, 'as many prefixes as max_prefixes: no rest';
}

# ---- Workers and Progress -------------------------------------------------------------------

{
    my $workers = Cache::Memcached::RustXS::Dict::Workers->new(jobs => 2);
    my (%got, $most);
    for my $n (1 .. 5) {
        $workers->run(sub { return { n => $n, pid => $$ } },
                      sub { $got{ $_[0]{n} } = $_[0]{pid}; $most = $workers->running if !$most || $workers->running > $most });
    }
    $workers->wait_all;
    is_deeply [ sort keys %got ], [ 1 .. 5 ], 'Workers: every result back';
    ok !(grep { $_ == $$ } values %got), '... each from a child process';
    ok $most <= 2, "... at most jobs (2) at once ($most)";
    my $ok = eval { $workers->run(sub { Cache::Memcached::RustXS::Dict::fail('no server') }, sub { }); $workers->wait_all; 1 };
    ok !$ok && ref $@ && $@->kind eq 'failure' && $@->message eq 'no server', "... a child's error dies here, as it was";
    $ok = eval { $workers->run(sub { POSIX::_exit(3) }, sub { }); $workers->wait_all; 1 };
    like $@, qr/a worker process ended without its result \(exit status 3\)/, '... a child that ends without one fails';

    my $now = 100;
    my $out = '';
    open my $fh, '>', \$out or die;
    my $p = Cache::Memcached::RustXS::Dict::Progress->new(on => 1, rewrite => 0, fh => $fh, clock => sub { $now });
    $p->start_count(4, 'prefixes tuned');
    $now += 30;
    $p->count_done('prefix a: done', 1);
    like $out, qr/\Aprefix a: done\nprefixes tuned: 1\/4 done, 1 at work, about 1m 30s left\n\z/,
        'Progress: each result a line, then done of total and the time left';
    $now += 1;
    $p->show('listing keys: 5');
    unlike $out, qr/listing keys/, '... not a terminal: a line every 10 s at most';
    $now += 10;
    $p->show('listing keys: 9');
    like $out, qr/listing keys: 9\n\z/, '... then the next';
}

# ---- Measure -----------------------------------------------------------------------------

{
    my ($train, $held) = held_out_split([qw(a b c d e)], $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    is_deeply [ $train, $held ], [ [qw(a c e)], [qw(b d)] ], 'held_out_split as Measure splits: even positions train, odd are held out';
    is_deeply [ held_out_split([ 1 .. 9 ], 4) ], [ [ 1, 2, 3, 5, 6, 7, 9 ], [ 4, 8 ] ], '... as the tuner does: every 4th held out';

    my @in = @{ $values_of{page} };
    my $gzip = measure_codec(\@in, codecs()->{memGzip});
    is $gzip->{bytes}, sum_length([ map { Compress::Zlib::memGzip($_) } @in ]), 'measure_codec: gzip bytes as memGzip makes them';
    ok $gzip->{us_compress} > 0 && $gzip->{us_decompress} > 0, '... and microseconds each way';
    my $m = measure(\@in, codecs());
    is_deeply [ sort keys %$m ], [qw(memGzip zstd)], 'measure: each codec';
    is $m->{zstd}{bytes}, sum_length([ map { compress($_, level => 3) } @in ]), '... zstd at level 3';
    my $frames = compress_all(\@in, codecs()->{zstd});
    is_deeply [ map { length } @$frames ], [ map { length compress($_, level => 3) } @in ], 'compress_all: each value alone';
    fails_like(sub { compress_all(['abc'], { compress => sub { 'x' }, decompress => sub { 'y' } }) }, 'failure',
               qr/internal error: a value did not come back whole/, 'a codec that loses data');

    my @user = @{ $values_of{user} };
    my $h = measure_held_out(\@user, size => 2048);
    my ($t, $o) = held_out_split(\@user, $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    my $id = load_dictionary_file(do { spew("$TMP/u.dict", train_dictionary($t, size => 2048)); "$TMP/u.dict" });
    is_deeply [ @{$h}{qw(values raw_bytes trained_on training_bytes)}, $h->{memGzip}{bytes}, $h->{zstd}{bytes},
                $h->{zstd_dict}{bytes}, $h->{zstd_dict}{dictionary_bytes} ],
              [ 60, sum_length($o), 60, sum_length($t), sum_length([ map { Compress::Zlib::memGzip($_) } @$o ]),
                sum_length([ map { compress($_, level => 3) } @$o ]),
                sum_length([ map { compress($_, level => 3, dictionary => $id) } @$o ]), length slurp("$TMP/u.dict") ],
              'measure_held_out: the held-out half under gzip, zstd and zstd with a dictionary of the other half';
    like measure_held_out($values_of{tiny}, size => 16384)->{zstd_dict_error},
         qr/\Ano dictionary from 2 values \(\d+ bytes\): zstd could not train a dictionary from these samples \(a few hundred values help\)\z/,
         'measure_held_out: too few values: why there is no dictionary';
    is_deeply measure_held_out(['one'], size => 256), { values => 0, raw_bytes => 0, trained_on => 1, training_bytes => 3 },
        'measure_held_out: one value: nothing held out, nothing measured';
    my ($dict, $why) = train([ 'a', 'b' ], 1024);
    ok !defined $dict && $why =~ /\Azstd could not train/ && $why !~ / at \S+ line /, "train: (undef, why): $why";
    fails_like(sub { load_dictionary_file("$TMP/none.dict") }, 'failure', qr/\Aload_dictionary: cannot open \S+none\.dict: [^\n]*[^.\n]\z/,
               'load_dictionary_file: a missing file, without " at ... line"');
    is load_dictionary_bytes(slurp("$TMP/u.dict")), $id, 'load_dictionary_bytes: the ID the same dictionary loads as from its file';
    fails_like(sub { load_dictionary_bytes('not a dictionary') }, 'failure', qr/\Aload_dictionary: not a zstd dictionary\z/,
               'load_dictionary_bytes: bytes that are no dictionary: the reason, naming no file');
}

# ---- Report ------------------------------------------------------------------------------

# Rows of one table of the text, under the heading starting with $title.
sub table_rows {
    my ($text, $title) = @_;
    my ($block) = $text =~ /^\Q$title\E[^\n]*\n(?:[^\n]*[^\s\n][^\n]*\n)*?((?:  [^\n]*\n)+)/m
        or return {};
    my @lines = split /\n/, $block;
    shift @lines;
    return { map { my @c = split ' ', $_; (shift(@c) => \@c) } @lines };
}

sub print_to_string {
    my ($print, $data) = @_;
    open my $fh, '>', \my $text or die $!;
    $print->($fh, $data);
    close $fh;
    return $text;
}

{
    for my $prefix (qw(user page tiny)) { $group{$prefix}{held_out} = measure_held_out($values_of{$prefix}, size => 2048) }
    my @groups = @group{qw(user page tiny)};
    my $r = report_data(server => $ADDR, delimiter => ':', sample => 1000, dictionary_size => 2048,
                        listing => { keys => 3, unfetchable => 0 }, groups => \@groups);
    is_deeply [ map { $_->{prefix} } @{ $r->{prefixes} } ], [qw(user page tiny)], 'report_data: the groups in order';
    my %sum;
    for my $g (@groups) {
        my $h = $g->{held_out};
        $sum{$_} += $h->{$_}{bytes} for qw(memGzip zstd);
        $sum{values} += $h->{values};
        $sum{dict} += $h->{zstd_dict}{bytes}, $sum{dict_gzip} += $h->{memGzip}{bytes} if $h->{zstd_dict};
    }
    is_deeply [ @{ $r->{total} }{qw(values memGzip_bytes zstd_bytes zstd_dict_bytes zstd_dict_memGzip_bytes)} ],
              [ @sum{qw(values memGzip zstd dict dict_gzip)} ], '... totals (the dictionary ones where there is one)';
    is $r->{total}{zstd_dict_ratio}, sprintf('%.3f', $sum{dict} / $sum{dict_gzip}) + 0, '... and their ratio';

    my $text = print_to_string(\&print_report, $r);
    like $text, qr/\Acmrx-dict report of \Q$ADDR\E: 3 keys listed, 3 prefixes \(delimiter ':'\), up to 1000 sampled each\n/,
        'print_report: the summary line';
    my $held = table_rows($text, 'Held-out half, bytes');
    my $uh = $group{user}{held_out};
    is_deeply $held->{user}, [ $uh->{values}, $uh->{raw_bytes}, $uh->{memGzip}{bytes}, $uh->{zstd}{bytes},
                               $uh->{zstd_dict}{bytes}, map { sprintf '%.3f', $_ }
                               $uh->{zstd}{bytes} / $uh->{memGzip}{bytes}, $uh->{zstd_dict}{bytes} / $uh->{memGzip}{bytes},
                               $uh->{zstd_dict}{bytes} / $uh->{raw_bytes} ], 'print_report: the held-out row of user';
    is_deeply [ @{ $held->{tiny} }[ 0, 4 ] ], [ 1, '-' ], '... tiny: one held out, no dictionary';
    like join(' ', @{ table_rows($text, 'Held-out half, microseconds')->{page} }), qr{\A(?:\d+\.\d / \d+\.\d ?){3}\z},
        '... microseconds for the three';
    is_deeply table_rows($text, 'Stored')->{user}, [ 120, $group{user}{item_bytes}, 120, $group{user}{stored_bytes},
                                                    '67%', '33%', 0 ], '... what is stored';
    like $text, qr/^  tiny: no dictionary from 2 values \(\d+ bytes\): /m, '... notes';
    is print_to_string(\&print_report, report_data(server => 'x:1', delimiter => ':', sample => 5, dictionary_size => 256,
                                                   listing => { keys => 0, unfetchable => 0 }, groups => [])),
       "cmrx-dict report of x:1: 0 keys listed, 0 prefixes (delimiter ':'), up to 5 sampled each\n\nNo keys to report on.\n",
       'print_report: no keys';
  SKIP: {
        skip 'JSON::PP is not installed (core from perl 5.14)', 2 unless $HAVE_JSON;
        my $json = JSON::PP->new->utf8->decode(print_to_string(\&print_json, $r));
        is_deeply $json->{total}, $r->{total}, 'print_json: the data';
        is $json->{prefixes}[0]{held_out}{zstd_dict}{bytes}, $uh->{zstd_dict}{bytes}, '... to the last number';
    }

    my $tr = train_data(source => { server => $ADDR, prefix => 'user', delimiter => ':', group => $group{user} },
                        values => $values_of{user}, sample_bytes => sum_length($values_of{user}),
                        dictionary_size => 2048, held_out => $uh, file => "$TMP/user.dict",
                        dictionary => 'd' x 2000, id => 42);
    $text = print_to_string(\&print_train, $tr);
    like $text, qr/\Acmrx-dict train: prefix 'user' of \Q$ADDR\E: 120 keys listed, 120 sampled, 120 values \(\d+ bytes\), 0 skipped\n/,
        'print_train: what it read';
    like $text, qr/^  zstd\+dict +$uh->{zstd_dict}{bytes} +\d\.\d{3} +\d\.\d{3} +\d+\.\d +\d+\.\d$/m, '... the held-out table';
    like $text, qr/^Wrote \Q$TMP\E\/user\.dict: a zstd dictionary of 2000 bytes, ID 42, trained on all 120 values/m,
        '... the dictionary';
    is skipped_note($group{bad}), ' (1 value flagged compressed, but not gzip, zlib or zstd; 1 value gzip that does not '
                                 . 'decompress; 1 value zlib that does not decompress; 1 value zstd that does not '
                                 . 'decompress (corrupt, or too large))', 'skipped_note';
    is skipped_note($group{user}), '', '... nothing skipped';
    is shown("a\nb\x7f"), 'a\x0Ab\x7F', 'shown: control bytes escaped';
    is shown("\x{263a}\t"), "\xe2\x98\xba\\x09", '... wide characters as UTF-8';
    is shown("\xff\t"), "\xff\\x09", '... other bytes as they are';
    is \&shown, \&Cache::Memcached::RustXS::_printable, "... the distribution's one escaper";
    is text("caf\xc3\xa9"), "caf\x{e9}", 'text: UTF-8 bytes as characters';
    is text("\xff"), "\xff", '... other bytes as they are';
}

# ---- the command: Dict::CLI::main and bin/cmrx-dict ----------------------------------------

# main(@$args) with standard input $stdin: (exit status, stdout, stderr).
sub run_main {
    my ($args, $stdin) = @_;
    my ($in, $out, $err) = map { "$TMP/main.$_" } qw(in out err);
    spew($in, defined $stdin ? $stdin : '');
    open my $old_in,  '<&', \*STDIN  or die $!;
    open my $old_out, '>&', \*STDOUT or die $!;
    open my $old_err, '>&', \*STDERR or die $!;
    open STDIN, '<', $in or die $!;
    open STDOUT, '>', $out or die $!;
    open STDERR, '>', $err or die $!;
    my $status = eval { Cache::Memcached::RustXS::Dict::CLI::main(@$args) };
    my $died = $@;
    close STDOUT;
    close STDERR;
    open STDIN,  '<&', $old_in  or die $!;
    open STDOUT, '>&', $old_out or die $!;
    open STDERR, '>&', $old_err or die $!;
    die $died if $died;
    return ($status, slurp($out), slurp($err));
}

{
    my ($status, $out, $err) = run_main([ 'report', '--server', $ADDR, '--size', '2048' ]);
    is $status, 0, 'report: exit 0' or diag $err;
    is $err, '', '... nothing on standard error (not a terminal)';
    like $out, qr/^cmrx-dict report of \Q$ADDR\E: 152 keys listed, 7 prefixes \(delimiter ':'\), up to 1000 sampled each$/m,
        '... the summary';
    my $held = table_rows($out, 'Held-out half, bytes');
    is_deeply [ @{ $held->{user} }[ 0 .. 3 ] ], [ @{ $group{user}{held_out} }{qw(values raw_bytes)},
                                                  map { $group{user}{held_out}{$_}{bytes} } qw(memGzip zstd) ],
        '... user: the held-out numbers measured here';
    my @order = map { (split ' ', $_)[0] } grep { /^  \S/ } split /\n/, ($out =~ /^Stored.*?\n(.*?)\n\n/ms)[0];
    is_deeply [ @order[ 1 .. 3 ] ], [qw(user page dz)], '... prefixes largest first';
    like $out, qr/^  dz: 10 values zstd, with dictionary \d+, which is not loaded \(--dictionary\)$/m,
        '... dz: its dictionary is not loaded';

    ($status, $out, $err) = run_main([ 'report', '--server', $ADDR, '--dictionary', $DICTIONARY,
                                       '--prefix', 'dz', '--prefix', 'bad' ]);
    is $status, 0, 'report --dictionary --prefix: exit 0' or diag $err;
    is_deeply [ sort keys %{ table_rows($out, 'Stored') } ], [qw(bad dz)], '... only those prefixes';
    is table_rows($out, 'Stored')->{dz}[6], 0, '... dz: decoded with the dictionary loaded';
    is table_rows($out, 'Held-out half, bytes')->{dz}[1],
       sum_length([ @{[ dictionary_samples() ]}[ map { 2 * $_ + 1 } 0 .. 4 ] ]), '... its held-out raw bytes';

  SKIP: {
        skip 'JSON::PP is not installed (core from perl 5.14)', 3 unless $HAVE_JSON;
        ($status, $out, $err) = run_main([ 'report', '--server', $ADDR, '--prefix', 'user', '--json', '--size', '2048' ]);
        is $status, 0, 'report --json: exit 0' or diag $err;
        my $r = eval { JSON::PP->new->utf8->decode($out) } || {};
        my $p = $r->{prefixes}[0] || {};
        is_deeply [ $p->{prefix}, @{ $p->{held_out} }{qw(values raw_bytes)}, $p->{held_out}{memGzip}{bytes} ],
                  [ 'user', @{ $group{user}{held_out} }{qw(values raw_bytes)}, $group{user}{held_out}{memGzip}{bytes} ],
                  '... the same numbers';
        is_deeply [ $r->{keys}, $r->{unfetchable}, $r->{total}{values} ], [ 152, 0, 60 ],
            '... the counts (keys a get cannot name: of the prefixes reported)';
    }

    my $out_file = "$TMP/user-all.dict";
    ($status, $out, $err) = run_main([ 'train', '--server', $ADDR, '--prefix', 'user', '--out', $out_file, @NO_LIMITS ]);
    is $status, 0, 'train --server: exit 0' or diag $err;
    is slurp($out_file), tuned_dictionary($values_of{user}, $group{user}{value_keys}, 120,
                                          Cache::Memcached::RustXS::Dict::SlabModel->from_server($SERVER->connect($ADDR))),
        "... the dictionary the tuner chooses (keys counted: the server's 120), trained on all the values, in key order";
    like $out, qr/, ID \Q@{[ load_dictionary($out_file) ]}\E, trained on all 120 values/, '... with the ID it loads with';
    ($status, $out, $err) = run_main([ 'train', '--server', $ADDR, '--prefix', 'user', '--out', $out_file ]);
    is_deeply [ $status, $err ], [ 1, "cmrx-dict: $out_file exists (it may be a dictionary that stored values name; --force replaces it)\n" ],
        'train: an existing --out: exit 1, why';

    my @files = map { spew("$TMP/u$_.json", $values_of{user}[$_]); "$TMP/u$_.json" } 0 .. 119;
    ($status, $out, $err) = run_main([ 'train', '--out', "$TMP/files.dict", @files, @NO_LIMITS ]);
    is $status, 0, 'train from files: exit 0' or diag $err;
    is slurp("$TMP/files.dict"), tuned_dictionary($values_of{user}, [], undef, Cache::Memcached::RustXS::Dict::SlabModel->new),
        '... the dictionary the tuner chooses for files (keys unknown)';
    my @originals = map { $item{$_}[2] } sort grep { /\Auser:/ } keys %item;    # JSON: no newlines
    ($status, $out, $err) = run_main([ 'train', '--out', "$TMP/stdin.dict", '--size', '256', @NO_LIMITS, '-' ], join("\n", @originals) . "\n");
    like $out, qr/\Acmrx-dict train: 120 samples \(\d+ bytes\): 120 samples from standard input\n/, 'train from standard input';

    my $closed_port = do {
        my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1) or die $@;
        my $port = $sock->sockport;
        close $sock;
        $port;
    };
    my $refuses = CMRXTest::FakeServer->start(script => ["ERROR\r\n"]);
    my @errors = (
        [ 'no subcommand', [], 2, qr/\Acmrx-dict: a subcommand is needed: report, train, prune, list, rollback or history; see cmrx-dict --help\n\z/ ],
        [ 'an unknown subcommand', ['frobnicate'], 2, qr/\Acmrx-dict: unknown subcommand 'frobnicate' \(report, train, prune, list, rollback or history\); see/ ],
        [ 'an option first', ['--server'], 2, qr/\Acmrx-dict: unknown option --server before the subcommand/ ],
        [ 'an unknown option', [ 'report', '--server', $ADDR, '--frobnicate' ], 2,
          qr/\Acmrx-dict: report: unknown option --frobnicate; see cmrx-dict --help\n\z/ ],
        [ 'a bad --server', [ 'report', '--server', 'localhost' ], 2, qr/\Acmrx-dict: --server must be HOST:PORT/ ],
        [ 'no --server', ['report'], 2, qr/--server HOST:PORT is needed/ ],
        [ 'a bad --sample', [ 'report', '--server', $ADDR, '--sample', 'many' ], 2, qr/--sample must be a whole number/ ],
        [ 'a bad --size', [ 'report', '--server', $ADDR, '--size', '100' ], 2, qr/--size must be a whole number of bytes, 256 or more/ ],
        [ 'a bad --delimiter', [ 'report', '--server', $ADDR, '--delimiter', '::' ], 2, qr/--delimiter must be one character/ ],
        [ 'a bad --timeout', [ 'report', '--server', $ADDR, '--timeout', '0' ], 2, qr/--timeout must be a number of seconds above 0/ ],
        [ 'a bad --levels', [ 'report', '--server', $ADDR, '--levels', '3,0' ], 2,
          qr/\Acmrx-dict: --levels: levels are zstd levels, -?\d+ to \d+ but 0, not '0' \(a list separated by commas: 3,9\)/ ],
        [ 'a bad --methods', [ 'train', '--all', '--out-dir', "$TMP/x", '--methods', 'samples,best', $ADDR ], 2,
          qr/\Acmrx-dict: --methods: methods are samples fastcover cover, not 'best'/ ],
        [ 'train without --out', [ 'train', '--server', $ADDR, '--prefix', 'user' ], 2, qr/--out FILE is needed/ ],
        [ 'train of one prefix, --jobs', [ 'train', '--server', $ADDR, '--prefix', 'user', '--jobs', '2', '--out', "$TMP/x.dict" ], 2,
          qr/\Acmrx-dict: train: --jobs is for --all \(without it, one prefix is tuned\); see cmrx-dict --help\n\z/ ],
        [ 'train of one prefix, --max-prefixes', [ 'train', '--out', "$TMP/x.dict", '--max-prefixes', '5', $files[0] ], 2,
          qr/\Acmrx-dict: train: --max-prefixes is for --all/ ],
        [ 'a bad --jobs', [ 'report', '--server', $ADDR, '--jobs', '0' ], 2, qr/\Acmrx-dict: --jobs must be a whole number, 1 or more, not '0'/ ],
        [ 'a bad --max-prefixes', [ 'train', '--all', '--out-dir', "$TMP/x", '--max-prefixes', 'many', $files[0] ], 2,
          qr/\Acmrx-dict: --max-prefixes must be a whole number, 1 or more, not 'many'/ ],
        [ 'train, --null without -', [ 'train', '--out', "$TMP/x.dict", '--null', $files[0] ], 2, qr/--null is for samples read from standard input/ ],
        [ 'train, - twice', [ 'train', '--out', "$TMP/x.dict", '-', '-' ], 2, qr/standard input \(-\) can be given once/ ],
        [ 'a server that cannot list its keys', [ 'report', '--server', $refuses->address ], 2,
          qr/\Acmrx-dict: \S+ cannot list its keys: to 'lru_crawler metadump all' it answered 'ERROR' .*[^;]\n\z/ ],
        [ 'nobody listening', [ 'report', '--server', "127.0.0.1:$closed_port" ], 1, qr/\Acmrx-dict: cannot connect to / ],
        [ 'gets the transcript does not hold', [ 'report', '--server', $ADDR, '--sample', '7', '--prefix', 'user' ], 1,
          qr/\Acmrx-dict: \Q$ADDR\E answered a get with a bad response: server replied ERROR \('ERROR'\)\n\z/ ],
        [ 'a prefix with no keys', [ 'train', '--server', $ADDR, '--prefix', 'nosuch', '--out', "$TMP/x.dict" ], 1,
          qr/\Acmrx-dict: no key of \Q$ADDR\E has the prefix 'nosuch' \(delimiter ':'; 152 keys listed\)\n\z/ ],
        [ 'a prefix of values that do not decode', [ 'train', '--server', $ADDR, '--prefix', 'bad', '--out', "$TMP/x.dict" ], 1,
          qr/\Acmrx-dict: no values of prefix 'bad' to train on \(1 value flagged compressed, but not gzip, zlib or zstd; / ],
        [ 'too few values', [ 'train', '--server', $ADDR, '--prefix', 'tiny', '--out', "$TMP/x.dict" ], 1,
          qr/\Acmrx-dict: cannot train a dictionary on 3 values of prefix 'tiny' \(\d+ bytes\): .*a few hundred values help\n\z/ ],
        [ 'a dictionary that does not load', [ 'report', '--server', $ADDR, '--dictionary', $files[0] ], 1,
          qr/\Acmrx-dict: \S+: not a zstd dictionary\n\z/ ],
    );
    for my $case (@errors) {
        my ($name, $args, $want_status, $want_err) = @$case;
        ($status, $out, $err) = run_main($args);
        is $status, $want_status, "$name: exit $want_status";
        like $err, $want_err, "$name: the message";
    }
    ok !-e "$TMP/x.dict", 'no dictionary written by a failure';

    ($status, $out) = run_main(['--help']);
    is $status, 0, '--help: exit 0';
    like $out, qr/^Usage:.*cmrx-dict report --server HOST:PORT.*^Options:.*--delimiter.*^Exit Status:.*perldoc cmrx-dict/ms,
        '--help: the synopsis, the options and the exit statuses of the manual';
    is_deeply [ run_main(['--version']) ], [ 0, "cmrx-dict $Cache::Memcached::RustXS::Dict::CLI::VERSION\n", '' ], '--version';
    like Cache::Memcached::RustXS::Dict::CLI::manual(), qr{(?:\A|/)cmrx-dict\.pod\z}, 'the manual: cmrx-dict.pod';

    # bin/cmrx-dict: the wrapper passes the arguments, the output and the
    # exit status through.
    my $script = File::Spec->catfile('bin', 'cmrx-dict');
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDOUT, '>', "$TMP/bin.out" or POSIX::_exit(126);
        open STDERR, '>', "$TMP/bin.err" or POSIX::_exit(126);
        { exec $^X, '-Mblib', $script, 'report', '--server', $ADDR, '--prefix', 'tiny' }
        POSIX::_exit(127);
    }
    waitpid $pid, 0;
    is $? >> 8, 0, 'bin/cmrx-dict report: exit 0' or diag slurp("$TMP/bin.err");
    is_deeply table_rows(slurp("$TMP/bin.out"), 'Stored')->{tiny}, [ 3, $group{tiny}{item_bytes}, 3, $group{tiny}{stored_bytes}, '0%', '0%', 0 ],
        '... its report';
    system("\"$^X\" -Mblib $script frobnicate 2>$TMP/bin.err");
    is $? >> 8, 2, 'bin/cmrx-dict frobnicate: exit 2';
    like slurp("$TMP/bin.err"), qr/\Acmrx-dict: unknown subcommand 'frobnicate'/, '... and says why';
}

done_testing;
