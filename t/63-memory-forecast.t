#!/usr/bin/perl
# Dict::SlabModel's forecast of the items a filled memcached holds, against
# real servers started with the settings Dict::SettingsAdvisor forecasts (each
# filled past its memory with the sample written over and over, then its
# curr_items read); and the advice's safety: no -C where CAS is in use, no
# option the server's version does not list.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use JSON::PP ();
use Compress::Zlib ();
use CMRXTest::Memcached;
use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Dict::SlabModel;
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(advise stored_item cas_use pack_items unpack_items);
use CMRXTest::DictCorpus ();
use CMRXTest::DictSets qw(run_dict json_of @FIXED_TUNING @NO_LIMITS);

my $MODEL = 'Cache::Memcached::RustXS::Dict::SlabModel';
my $MB    = 12;    # -m of the servers filled: small, so that a fill takes a second or two

# The sample: every 12th JSON value of the corpus gzipped, and three values
# over 16 KiB (chunked items where slab_chunk_max is 16384).
my $corpus = corpus_values('bench/data/values');
my @json = map { @{ $corpus->{$_} } } qw(gh npm compat);
my @values = map { Compress::Zlib::memGzip($json[$_][1]) } grep { $_ % 12 == 0 } 0 .. $#json;
push @values, map { 'z' x (17000 + 9001 * $_) } 1 .. 3;
my $KEY_LENGTH = length key(0);
my @items = map { [ $KEY_LENGTH, length $_, 2 ] } @values;

my %settings = (growth_factor => '1.25', chunk_size => 48, slab_chunk_max => 524288, item_size_max => 1048576,
                maxbytes => $MB << 20, cas_enabled => 'yes', slab_reassign => 'yes');

# ---- the advice, without a server -------------------------------------------

my %NO_CAS = (cas_misses => 0, cas_hits => 0, cas_badval => 0);
my $free = advise(items => \@items, nodes => [ { spec => 'a', settings => \%settings, stats => \%NO_CAS } ]);
my $node = $free->{nodes}[0];
ok $node->{change}, 'on defaults, a change is advised';
ok scalar(grep { $_->{options} =~ /-C/ } @{ $node->{forecasts} }), '... -C forecast where no counter shows CAS in use';
cmp_ok $node->{best}{items}, '>', $node->{current}, '... holding more items';
is $node->{defaults}, $node->{current}, "the node's own settings are memcached's defaults";

for my $case ([ 'cas_hits counted', { stats => { cas_hits => 1 } } ],
              [ 'cas_badval counted', { stats => { cas_badval => 2 } } ],
              [ 'uses_cas given', { stats => \%NO_CAS }, uses_cas => 1 ],
              [ 'stats not read', { stats => undef } ],
              [ 'no cas counters in stats', { stats => { cmd_get => 5 } } ]) {
    my ($name, $extra, @opt) = @$case;
    my $a = advise(items => \@items, nodes => [ { spec => 'a', settings => \%settings, %$extra } ], @opt);
    my $n = $a->{nodes}[0];
    is scalar(grep { $_->{options} =~ /-C/ } @{ $n->{forecasts} }), 0, "$name: no forecast names -C";
    unlike $n->{best}{options}, qr/-C/, "$name: the advice keeps CAS";
    ok $n->{no_cas_why}, "$name: and says why ($n->{no_cas_why})";
}
is cas_use({ cas_misses => 0, cas_hits => 0, cas_badval => 0, cmd_get => 9 }), undef,
    'gets and get alike count in cmd_get: not CAS use';

my %old = %settings;
delete $old{slab_chunk_max};
my $older = advise(items => \@items, nodes => [ { spec => 'a', settings => \%old, stats => \%NO_CAS } ]);
is scalar(grep { $_->{options} =~ /slab_chunk_max/ } @{ $older->{nodes}[0]{forecasts} }), 0,
    'a version without slab_chunk_max in its stats settings: the option is not named';

my $pool = advise(items => \@items, nodes => [ map { { spec => $_, settings => \%settings, stats => \%NO_CAS } } 1 .. 3 ]);
is $pool->{pool}{current}, 3 * $node->{current}, "the pool's items: the nodes' summed";
is $pool->{pool}{best}, 3 * $node->{best}{items}, "... and with the advice";

# Packed as a prefix's process returns them: the same items, the same forecast.
my @weighted = map { [ @{ $items[$_] }, 1 + ($_ % 3) / 7 ] } 0 .. $#items;
my $packed = pack_items([ @weighted[0 .. 9] ]) . pack_items([ @weighted[10 .. $#weighted] ]);
is_deeply [ unpack_items($packed) ], \@weighted, 'pack_items, joined, then unpack_items: the items exactly, fractional times too';
is_deeply [ unpack_items(pack_items([ [ 5, 60, 0 ] ])) ], [ [ 5, 60, 0, 1 ] ], '... an item without times: written once';
is_deeply [ unpack_items(pack_items([ [ 5, 60, 4294967295, 2 ] ])) ], [ [ 5, 60, 4294967295, 2 ] ],
    '... flags of all 32 bits, as memcached keeps them';
is_deeply [ unpack_items('') ], [], '... none';
my $model = $MODEL->from_stats(\%settings, []);
is scalar $model->forecast_items([ unpack_items($packed) ]), scalar $model->forecast_items(\@weighted),
    '... and forecast the same';

is stored_item(10, 500, 300, 64, 0.8)->[2], 2, 'stored_item: compressed when small enough';
is_deeply stored_item(10, 500, 450, 64, 0.8), [ 10, 500, 0 ], '... raw when the frame is over the ratio';
is_deeply stored_item(10, 50, 20, 64, 0.8), [ 10, 50, 0 ], '... raw under the threshold';

# ---- against memcached -------------------------------------------------------

# Memcached's defaults, the advice and other candidates it forecasts: the
# settings each server of this part runs with (two tests a server).
my %args_of = ("memcached's defaults" => []);
{
    my @f = @{ $node->{forecasts} };
    my @named = ($node->{best}, map { my $re = $_; (grep { $_->{options} =~ $re } @f)[0] || () } qr/-C/, qr/-n /);
    for my $f (@named) {
        my $s = $f->{settings};
        $args_of{ $f->{options} } = [ '-f', $s->{growth_factor}, '-n', $s->{chunk_size},
                                      '-o', "slab_chunk_max=$s->{slab_chunk_max}", $s->{cas} ? () : '-C' ];
        last if keys %args_of >= 4;
    }
}
my $probe = CMRXTest::Memcached->start_optional;
SKIP: {
    skip(CMRXTest::Memcached->unavailable, 2 * keys %args_of) unless $probe;
    undef $probe;
    for my $name (sort keys %args_of) {
        my $server = CMRXTest::Memcached->start(args => [ '-m', $MB, @{ $args_of{$name} } ]);
        my $conn = connect_to($server->address);
        my $model = $MODEL->from_stats($conn->stats('settings'), []);
        my ($forecast, $rounds) = $model->forecast_items(\@items);
        my $n = 0;
        for (1 .. $rounds) {
            my $batch = '';
            $batch .= sprintf "set %s 2 0 %d noreply\r\n%s\r\n", key($n++), length $_, $_ for @values;
            $conn->send($batch);
        }
        my $st = $conn->stats;
        cmp_ok $st->{evictions}, '>', 0, "$name: filled past its memory";
        cmp_ok abs($forecast - $st->{curr_items}), '<=', 0.01 * $st->{curr_items},
            "$name: forecast $forecast items, curr_items $st->{curr_items} (within 1 %)";
    }
}

# ---- a pool of nodes set apart: its nodes' forecasts, summed ------------------

# Two nodes, one on memcached's defaults, one with -f 1.08 -C, each written
# half of the keys (alternately, as a client's hash spreads them): the
# pool's model forecasts each node with its own settings and sums them; a
# model of their classes merged would forecast neither.
my @apart = CMRXTest::Memcached->start_optional(count => 1, args => [ '-m', $MB ]);
push @apart, CMRXTest::Memcached->start_optional(count => 1, args => [ '-m', $MB, '-f', '1.08', '-C' ]) if @apart;
SKIP: {
    skip(CMRXTest::Memcached->unavailable, 3) unless @apart == 2;
    require Cache::Memcached::RustXS::Dict::Pool;
    my $pool_source = Cache::Memcached::RustXS::Dict::Pool->connect([ map { $_->address } @apart ]);
    my $model = $MODEL->from_server($pool_source);
    $pool_source->close;
    my @one = map { $MODEL->from_stats(Cache::Memcached::RustXS::Dict::NodeReader->connect($_->address)->settings, []) }
              @apart;
    my ($forecast, $rounds) = $model->forecast_items(\@items);
    is $forecast, $one[0]->forecast_items(\@items) + $one[1]->forecast_items(\@items),
        "a pool of two set apart: the nodes' forecasts summed ($forecast)";
    like $model->classes_from, qr/2 nodes in 2 settings/, '... and it says so (' . $model->classes_from . ')';
    my @conns = map { IO::Socket::INET->new(PeerAddr => $_->address, Timeout => 10) or die "connect: $@" } @apart;
    binmode $_ for @conns;
    my $n = 0;
    for (1 .. 2 * $rounds) {
        my @batch = ('', '');
        for my $v (@values) {
            my $k = key($n++);
            $batch[ $n % 2 ] .= sprintf "set %s 2 0 %d noreply\r\n%s\r\n", $k, length $v, $v;
        }
        print {$conns[$_]} $batch[$_] for 0, 1;
    }
    my $held = 0;
    $held += Cache::Memcached::RustXS::Dict::NodeReader->connect($_->address)->stats->{curr_items} for @apart;
    cmp_ok abs($forecast - $held), '<=', 0.01 * $held, "... against the nodes' curr_items, $held (within 1 %)";
}

# ---- cmrx-dict report: the advice per node and for the pool -----------------

my @pool = CMRXTest::Memcached->start_optional(count => 2);
SKIP: {
    skip(CMRXTest::Memcached->unavailable, 9) unless @pool;
    my @nodes = map { $_->address } @pool;
    my @conns = map { connect_to($_) } @nodes;
    for my $i (1 .. 200) {
        my $v = CMRXTest::DictCorpus::user_json($i);
        $conns[ $i % 2 ]->send("set user:$i 0 0 " . length($v) . " noreply\r\n$v\r\n");
    }
    $_->stats for @conns;    # the sets are in
    # A cas on the second node (it misses): counted in its stats.
    $conns[1]->send("cas user:1 0 0 1 12345\r\nx\r\n");
    my $reply = $conns[1]->read_line;
    my @report = ('report', (map { ('--server', $_) } @nodes), @FIXED_TUNING, @NO_LIMITS, '--json');
    my ($status, $out, $err) = run_dict(\@report);
    is $status, 0, 'report --json: exit status 0' or diag $err;
    my $advice = json_of($out)->{memcached_settings};
    my @n = @{ $advice->{nodes} || [] };
    is scalar @n, 2, 'report --json: the advice of each node';
    is $n[0]{version}, $conns[0]->stats->{version}, '... with its version';
    is $advice->{pool}{current}, $n[0]{current} + $n[1]{current}, "... and the pool's items";
    like $advice->{procedure}, qr/one node at a time/, '... and the procedure';
    ok scalar(grep { $_->{options} =~ /-C/ } @{ $n[0]{forecasts} }), '... -C forecast for the node without cas';
    is scalar(grep { $_->{options} =~ /-C/ } @{ $n[1]{forecasts} }), 0, '... none for the node a cas was counted on';
    like $n[1]{no_cas_why}, qr/its stats show cas in use \(cas_\w+ 1\)/, '... and says why';
    ($status, $out, $err) = run_dict([ @report, '--uses-cas' ]);
    $advice = json_of($out)->{memcached_settings};
    is scalar(grep { $_->{options} =~ /-C/ } map { @{ $_->{forecasts} } } @{ $advice->{nodes} || [] }), 0,
        'report --uses-cas: no -C for any node';
}

done_testing;

sub key { sprintf 'forecast:%09d', $_[0] }

# A connection through cmrx-dict's reader of memcached, whose stats the
# tests read the server with.
sub connect_to {
    my ($address) = @_;
    return Cache::Memcached::RustXS::Dict::NodeReader->connect($address, timeout => 10);
}
