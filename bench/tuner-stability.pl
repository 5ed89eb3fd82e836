#!/usr/bin/perl
# Whether the tuner's choices hold when the sample moves, and whether a
# pool trains as one node does: one cache (every value of bench/data/values
# under --copies keys, gzipped as the clients store it) is sampled by
# `cmrx-dict train --all` --samplings times from a node holding every key
# and as many times from a pool of 4 nodes holding a quarter of the keys
# each, both filled in a different order each time, so that each listing
# samples other keys; each set fills a memcached (--memory MB) past its
# memory through Cache::Memcached::Fast: the items each set holds, against
# each other and against Fast's gzip, their spread, the forecast of
# Dict::SlabModel against memcached's own count, and the choice per prefix.
#
#   perl -Mblib bench/tuner-stability.pl [--quick] [--samplings 3] [--copies 100] [--memory 64]
#
# Knobs: BENCH_STABILITY_FAMILIES (default: every family). See
# bench/README.md ("Tuner stability").
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";
use Digest::MD5 ();
use File::Path ();
use File::Temp ();
use Getopt::Long ();
use List::Util ();
use POSIX ();
use Time::HiRes ();

use CMRXBench::Memory qw(corpus_halves gzip_methods set_methods stats commas table);

binmode STDOUT, ':encoding(UTF-8)';
STDERR->autoflush(1);
$SIG{INT} = $SIG{TERM} = sub { print STDERR "\ninterrupted\n"; exit 130 };

my %opt = (quick => $ENV{BENCH_QUICK} ? 1 : 0, samplings => 3, copies => 100, memory => 64);
Getopt::Long::GetOptions(\%opt, 'quick!', 'samplings=i', 'copies=i', 'memory=i', 'help|h')
    && !$opt{help} && $opt{samplings} >= 2 && $opt{copies} >= 1 && $opt{memory} >= 8
    or die "usage: perl -Mblib bench/tuner-stability.pl [--quick] [--samplings N (2 or more)] "
         . "[--copies N] [--memory MB (8 or more)]\n";
if ($opt{quick}) { $opt{copies} = 20; $opt{memory} = 16 }
my @FAMILIES  = split /,/, ($ENV{BENCH_STABILITY_FAMILIES} || 'api,compat,doc,gh,method,news,npm');
my $NODES     = 4;
my $THRESHOLD = 100;       # compress_threshold of every writer
my $BATCH     = 500;       # keys per set_multi
my $OVERFILL  = 1.5;       # items written per item the model says fit
my $MAX_FILLS = 3;         # more writes when the server is not full yet

for my $m (qw(Cache::Memcached::Fast Cache::Memcached::RustXS::Zstd Cache::Memcached::RustXS::Dict::SlabModel
              Cache::Memcached::RustXS::Dict::NodeReader Cache::Memcached::RustXS::Dict::Pool
              Cache::Memcached::RustXS::Dict::SetTrainer CMRXDev::Memcached)) {
    eval "require $m; 1" or die "bench/tuner-stability.pl needs $m (perl Makefile.PL && make, then perl -Mblib): "
                              . (split /\n/, $@)[0] . "\n";
}

my $tmp = File::Temp->newdir;
my $out = "$FindBin::Bin/results";
File::Path::make_path($out);

# Every value of the families, the training and held-out halves together:
# the cache is all of them.
my ($even, $odd) = corpus_halves(@FAMILIES);
my %values = map { ($_ => [ @{ $even->{$_} }, @{ $odd->{$_} } ]) } @FAMILIES;
my @items = map { my $f = $_; map { my $v = $_; map { [ "$v->[0]:$_", $v->[1], $f ] } 1 .. $opt{copies} } @{ $values{$f} } }
            @FAMILIES;

# ---- the sets ------------------------------------------------------------------------------

# The cache's keys written, in an order drawn with $seed, to the nodes
# (each key to the node its MD5 names, as a client hashes keys over a pool).
sub fill_cache {
    my ($seed, @nodes) = @_;
    srand $seed;
    my @order = List::Util::shuffle(0 .. $#items);
    my @client = map { Cache::Memcached::Fast->new({ servers => [ $_->address ], compress_threshold => $THRESHOLD,
                                                     compress_methods => gzip_methods() }) } @nodes;
    my @batch = map { [] } @nodes;
    for my $i (@order) {
        my $node = @nodes == 1 ? 0 : unpack('N', Digest::MD5::md5($items[$i][0])) % @nodes;
        push @{ $batch[$node] }, [ @{ $items[$i] }[0, 1] ];
        next if @{ $batch[$node] } < $BATCH;
        $client[$node]->set_multi(@{ $batch[$node] });
        $batch[$node] = [];
    }
    $client[$_]->set_multi(@{ $batch[$_] }) for grep { @{ $batch[$_] } } 0 .. $#nodes;
    return;
}

# A set trained by train --all (no option but --stage 0) on the nodes; its
# decisions and the seconds the tuning took.
sub train_on {
    my ($name, @nodes) = @_;
    my @addresses = map { $_->address } @nodes;
    my $source = @nodes == 1 ? Cache::Memcached::RustXS::Dict::NodeReader->connect($addresses[0])
                             : Cache::Memcached::RustXS::Dict::Pool->connect(\@addresses);
    my $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server($source);
    my $t0 = Time::HiRes::time();
    my $result = Cache::Memcached::RustXS::Dict::SetTrainer::train_all(
        dir => "$tmp/$name", source => $source, memory => $memory, delimiter => ':', sample => 1000, stage => 0);
    my $seconds = Time::HiRes::time() - $t0;
    $source->close;
    return { name => $name, dir => "$tmp/$name", seconds => $seconds, result => $result };
}

my @sets;
my $server_args = [ '-m', 4096, '-o', 'no_lru_maintainer' ];    # holds the cache whole
for my $sampling (1 .. $opt{samplings}) {
    print STDERR "sampling $sampling: one node holding every key, filled in order $sampling, train --all\n";
    my $node = CMRXDev::Memcached->start(args => $server_args);
    fill_cache($sampling, $node);
    push @sets, train_on("one node, order $sampling", $node);
    $node->stop;
}
for my $sampling (1 .. $opt{samplings}) {
    print STDERR "sampling $sampling: a pool of $NODES nodes holding a quarter of the keys each, filled in order "
               . "$sampling, train --all\n";
    my @nodes = CMRXDev::Memcached->start(count => $NODES, args => $server_args);
    fill_cache($sampling, @nodes);
    push @sets, train_on("pool of $NODES, order $sampling", @nodes);
    $_->stop for @nodes;
}

# ---- filling a memcached with each set -----------------------------------------------------

my $model = Cache::Memcached::RustXS::Dict::SlabModel->new(memory_limit => $opt{memory} << 20);
# The sets compared apart from the fill: the forecast of a 64 MB memcached
# on memcached's defaults, whose 64 pages make the classes' shares finer
# than a small --memory's.
my $model64 = Cache::Memcached::RustXS::Dict::SlabModel->new;

# The values in turn (a family at a time), written again and again under
# new keys until the server evicts; the items it holds then.
sub fill_items {
    my ($methods_of) = @_;
    my @seq;
    my ($longest) = sort { $b <=> $a } map { scalar @{ $values{$_} } } @FAMILIES;
    for my $i (0 .. $longest - 1) {
        push @seq, map { [ $_, @{ $values{$_}[ $i % @{ $values{$_} } ] } ] } @FAMILIES;
    }
    my %client = map { ($_ => Cache::Memcached::Fast->new({ servers => [], compress_threshold => $THRESHOLD,
                                                            compress_methods => $methods_of->($_) })) } @FAMILIES;
    # Stored sizes, for how many to write, and the items the model
    # forecasts for them (the fill's keys: the value's and ":%07d").
    my ($chunks, @written) = (0);
    for my $s (@seq) {
        my ($f, $key, $value) = @$s;
        my ($c, $len, $flags) = (undef, length $value, 0);
        ($len, $flags) = (length $c, 2)
            if $methods_of->($f)->[0]->(\$value, \$c) && length $c <= 0.8 * length $value;
        $chunks += $model->item_memory(length($key) + 8, $len, $flags) || 0;
        push @written, [ length($key) + 8, $len, $flags ];
    }
    my $forecast = $model->forecast_items(\@written);
    my $forecast64 = $model64->forecast_items(\@written);
    my $count = int($OVERFILL * ($opt{memory} << 20) / ($chunks / @seq));
    my $server = CMRXDev::Memcached->start(args => [ '-m', $opt{memory} ]);
    %client = map { ($_ => Cache::Memcached::Fast->new({ servers => [ $server->address ], compress_threshold => $THRESHOLD,
                                                         compress_methods => $methods_of->($_) })) } @FAMILIES;
    my ($n, $st) = (0);
    for my $pass (1 .. $MAX_FILLS) {
        my %by;
        for my $i (1 .. $count) {
            my ($f, $key, $value) = @{ $seq[ $n % @seq ] };
            push @{ $by{$f} }, [ sprintf('%s:%07d', $key, $n++), $value ];
            if (@{ $by{$f} } == $BATCH || $i == $count) {
                $client{$_}->set_multi(@{ $by{$_} }) for grep { @{ $by{$_} } } keys %by;
                %by = ();
            }
        }
        $st = stats($server->address);
        last if $st->{evictions} > 0;
    }
    $server->stop;
    return { items => 0 + $st->{curr_items}, evictions => 0 + $st->{evictions}, bytes => 0 + $st->{bytes},
             chunk_per_item => $chunks / @seq, forecast => $forecast, forecast64 => $forecast64 };
}

print STDERR "filling a $opt{memory} MB memcached: Fast's gzip\n";
my $gzip = fill_items(sub { gzip_methods() });
for my $s (@sets) {
    print STDERR "filling a $opt{memory} MB memcached: the set of $s->{name}\n";
    my $dir = $s->{dir};
    $s->{fill} = fill_items(sub { set_methods($dir, "$_[0]:") });
}

# ---- the choices ---------------------------------------------------------------------------

for my $s (@sets) {
    my %choice;
    for my $d (@{ $s->{result}{prefixes} }) {
        my $c = $d->{tuned} && $d->{tuned}{choice};
        $choice{ $d->{group}{prefix} } = $d->{entry} && $c ? "$c->{method} $c->{size} L$c->{level}" : 'none';
    }
    $s->{choice} = \%choice;
}

# ---- the tables --------------------------------------------------------------------------------

my %kind = (node => [ grep { $_->{name} =~ /\Aone node/ } @sets ], pool => [ grep { $_->{name} =~ /\Apool/ } @sets ]);
my %summary;
for my $k (qw(node pool)) {
    my @items = map { $_->{fill}{items} } @{ $kind{$k} };
    my @at64 = map { $_->{fill}{forecast64} } @{ $kind{$k} };
    my ($most, $fewest) = (List::Util::max(@items), List::Util::min(@items));
    $summary{$k} = { mean => List::Util::sum(@items) / @items, spread => 100 * ($most / $fewest - 1),
                     mean64 => List::Util::sum(@at64) / @at64,
                     spread64 => 100 * (List::Util::max(@at64) / List::Util::min(@at64) - 1),
                     worst_error => List::Util::max(map { abs _error($_->{fill}) } @{ $kind{$k} }) };
}
$summary{pool_of_node} = 100 * $summary{pool}{mean} / $summary{node}{mean};
$summary{pool_of_node64} = 100 * $summary{pool}{mean64} / $summary{node}{mean64};
sub _error { my ($fill) = @_; 100 * ($fill->{forecast} / $fill->{items} - 1) }

printf "Items resident in a %d MB memcached (-m %d, filled past its memory through Cache::Memcached::Fast, its "
     . "own curr_items) with sets that `cmrx-dict train --all` made of one cache (%s, every value under %d keys, "
     . "%s keys, gzipped), sampled %d times from one node and %d times from a pool of %d nodes holding a quarter "
     . "of the keys each, filled in a different order each time\n\n",
    $opt{memory}, $opt{memory}, join('/', @FAMILIES), $opt{copies}, commas(scalar @items), $opt{samplings},
    $opt{samplings}, $NODES;
table([ 'set', 'items', 'vs Fast gzip', "vs one node's mean", 'forecast', 'forecast off by', 'forecast, 64 MB',
        'tuning, s' ],
      [ "Fast's gzip", commas($gzip->{items}), '1.00x', '-', commas($gzip->{forecast}),
        sprintf('%+.2f %%', _error($gzip)), commas($gzip->{forecast64}), '-' ],
      map { [ $_->{name}, commas($_->{fill}{items}), sprintf('%.3fx', $_->{fill}{items} / $gzip->{items}),
              sprintf('%+.2f %%', 100 * ($_->{fill}{items} / $summary{node}{mean} - 1)), commas($_->{fill}{forecast}),
              sprintf('%+.2f %%', _error($_->{fill})), commas($_->{fill}{forecast64}), sprintf('%.1f', $_->{seconds}) ] }
      @sets);
print "\n  (forecast: what Dict::SlabModel's forecast_items says a memcached of these settings holds of the values "
    . "as the fill writes them; off by: against curr_items; 64 MB: the same for a 64 MB memcached on memcached's "
    . "defaults)\n\n";
for my $k (qw(node pool)) {
    printf "%s: %s items on average (%.3fx Fast's gzip), the samplings within %.2f %% of each other, the forecast "
         . "off by %.2f %% at most\n", ($k eq 'node' ? 'One node' : "A pool of $NODES"), commas(int $summary{$k}{mean}),
        $summary{$k}{mean} / $gzip->{items}, $summary{$k}{spread}, $summary{$k}{worst_error};
}
printf "The pool's sets hold %.2f %% of the items of one node's, the means of %d samplings each (forecast at "
     . "64 MB: %.2f %%; one node's within %.2f %%, the pool's within %.2f %%)\n",
    $summary{pool_of_node}, $opt{samplings}, $summary{pool_of_node64}, $summary{node}{spread64}, $summary{pool}{spread64};

print "\nThe choices (method, dictionary size asked, level; none: no dictionary)\n\n";
table([ 'prefix', map { $_->{name} } @sets ],
      map { my $f = $_; [ "$f:", map { $_->{choice}{$f} || '-' } @sets ] } @FAMILIES);
printf "\nTuning: %.1f s a set on average (%d samples a prefix at most)\n",
    List::Util::sum(map { $_->{seconds} } @sets) / @sets, 1000;

if (eval { require JSON::PP; 1 }) {
    open my $j, '>', "$out/tuner-stability.json" or die "$out/tuner-stability.json: $!\n";
    print {$j} JSON::PP->new->canonical->pretty->encode({
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), perl => sprintf('%vd', $^V), %opt,
        families => \@FAMILIES, gzip => $gzip,
        sets => [ map { +{ name => $_->{name}, items => $_->{fill}, seconds => $_->{seconds}, choice => $_->{choice} } }
                  @sets ],
        summary => \%summary,
    });
    close $j;
    print "results: bench/results/tuner-stability.json\n";
}
