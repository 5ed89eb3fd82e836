#!/usr/bin/perl
# What the memory buys: the hit rate of a read-through cache (get_multi of
# a batch of keys; on a miss, "fetch" the value and set it) under
# Zipf-distributed requests over a key space several times what a small
# memcached holds, Cache::Memcached::Fast's default gzip against the
# dictionary set `cmrx-dict train --all` makes, in the same run.
#
#   perl -Mblib bench/hitrate.pl [--quick] [--memory MB] [--keys N]
#        [--warmup N] [--gets N] [--zipf S,S] [--batch N] [--seed N]
#
# See bench/README.md ("Hit rate").
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";    # dev/lib: helpers shared with the tests
use File::Path ();
use File::Temp ();
use Getopt::Long ();
use POSIX ();

use CMRXBench::Runner qw(now);
use CMRXBench::Memory qw(corpus_halves train_set shuffled_ids zipf_cdf zipf_rank
                         gzip_methods set_methods one_object_methods stats commas table);
use CMRXDev::Memcached ();

binmode STDOUT, ':encoding(UTF-8)';
STDERR->autoflush(1);
$SIG{INT} = $SIG{TERM} = sub { print STDERR "\ninterrupted\n"; exit 130 };

my %opt = (quick => $ENV{BENCH_QUICK} ? 1 : 0, batch => 100, seed => 19);
Getopt::Long::GetOptions(\%opt, 'quick!', 'memory=i', 'keys=i', 'warmup=i', 'gets=i', 'zipf=s',
                         'batch=i', 'seed=i', 'help|h')
    && !$opt{help}
    or die "usage: perl -Mblib bench/hitrate.pl [--quick] [--memory MB] [--keys N] [--warmup N] [--gets N] "
         . "[--zipf S,S] [--batch N] [--seed N]\n";
my $MEMORY_MB = $opt{memory} || ($opt{quick} ? 8 : 32);       # memcached -m
my $KEYS      = $opt{keys}   || ($opt{quick} ? 60_000 : 300_000);
my $WARMUP    = $opt{warmup} // 2 * $KEYS;                      # gets before counting
my $GETS      = $opt{gets}   || ($opt{quick} ? 100_000 : 600_000);
my @ZIPF      = split /,/, ($opt{zipf} || ($opt{quick} ? '0.99' : '0.99,0.8'));
my $BATCH     = $opt{batch};                                    # keys per get_multi
my $THRESHOLD = 100;                                            # compress_threshold of every writer
my @FAMILIES  = split /,/, ($ENV{BENCH_MEMORY_FAMILIES} || 'gh,npm,compat');
my $BAR_ONE   = 0.6;    # the single Fast object's fetches over gzip's, Zipf(0.99)
die "--memory, --keys, --gets and --batch must be positive; --zipf a list of exponents\n"
    unless $MEMORY_MB >= 8 && $KEYS > 0 && $GETS > 0 && $BATCH > 0 && !grep { !/\A\d*\.?\d+\z/ } @ZIPF;

for my $m (qw(Cache::Memcached::Fast Cache::Memcached::RustXS::Zstd)) {
    eval "require $m; 1" or die "bench/hitrate.pl needs $m (perl Makefile.PL && make, then perl -Mblib): "
                              . (split /\n/, $@)[0] . "\n";
}

# ---- the set, and the key population -----------------------------------------------

my ($train, $fill) = corpus_halves(@FAMILIES);
my $out = "$FindBin::Bin/results";
File::Path::make_path($out);
my $tmp = File::Temp->newdir;
print STDERR "training the set: cmrx-dict train --all --stage 0 --out-dir DIR (half of the values)\n";
my $set_dir = train_set(dir => "$tmp/set", log => "$out/hitrate-train.txt",
                        items => [ map { @{ $train->{$_} } } @FAMILIES ]);

# Key $id: a family in turn, a value of its fill half chosen by the id, and
# the value's key with the id after it (as bench/memory.pl writes them).
sub key_of { CMRXBench::Memory::key_of($fill, \@FAMILIES, $_[0]) }

# The requests: key ids drawn from Zipf($s) over $KEYS keys (rank r with
# weight 1 / r**s; ranks given to ids in a shuffled order), packed 32-bit.
sub requests {
    my ($s) = @_;
    srand($opt{seed});
    my $id = shuffled_ids($KEYS);
    my $cdf = zipf_cdf($KEYS, $s);
    my $seq = '';
    $seq .= pack 'N', $id->[ zipf_rank($cdf, rand $cdf->[-1]) ] for 1 .. $WARMUP + $GETS;
    return \$seq;
}

# ---- the ways of writing: family => Fast object ------------------------------------------

my ($one, $one_why) = one_object_methods($set_dir);
my @WAYS = (
    { name => 'Fast default (gzip)', methods => sub { gzip_methods() }, one => 1 },
    { name => 'the set, a Fast object per prefix', methods => sub { set_methods($set_dir, "$_[0]:") } },
    $one ? { name => 'the set, one Fast object', methods => sub { $one }, one => 1 }
         : { name => 'the set, one Fast object', unavailable => $one_why },
);

sub clients {
    my ($way, $addr) = @_;
    my $new = sub { Cache::Memcached::Fast->new({ servers => [ $addr ], compress_threshold => $THRESHOLD,
                                                  compress_methods => $way->{methods}->($_[0]) }) };
    my $shared = $way->{one} ? $new->('') : undef;
    return { map { ($_ => $shared || $new->($_)) } @FAMILIES };
}

# ---- the read-through loop --------------------------------------------------------------------

sub run_way {
    my ($way, $seq) = @_;
    my $server = CMRXDev::Memcached->start(args => [ '-m', $MEMORY_MB ]);
    my $client = clients($way, $server->address);
    my %objects = map { ("$client->{$_}" => $client->{$_}) } @FAMILIES;
    my %c = (gets => 0, hits => 0, fetches => 0, wrong => 0, read => 0);
    my $t0 = now;
    my $total = $WARMUP + $GETS;
    for (my $at = 0; $at < $total; $at += $BATCH) {
        my $n = $total - $at < $BATCH ? $total - $at : $BATCH;
        my $measured = $at >= $WARMUP;
        if ($at == $WARMUP) {
            my $st = stats($server->address);
            @c{qw(warm_items warm_evictions)} = ($st->{curr_items}, $st->{evictions});
        }
        my (%want, %by_client);
        for my $id (unpack 'N*', substr($$seq, 4 * $at, 4 * $n)) {
            my ($key, $value, $f) = key_of($id);
            $want{$key} ||= [ $value, $f, 0 ];
            $want{$key}[2]++;
        }
        push @{ $by_client{ "$client->{ $want{$_}[1] }" } }, $_ for keys %want;
        my %got = map { %{ $objects{$_}->get_multi(@{ $by_client{$_} }) || {} } } keys %by_client;
        my %set;
        for my $key (keys %want) {
            my ($value, $f, $times) = @{ $want{$key} };
            if (exists $got{$key}) {
                $c{read}++;
                $c{wrong}++ unless defined $got{$key} && $got{$key} eq $value;
                $c{hits} += $times if $measured;
            }
            else {
                $c{fetches}++ if $measured;    # the backend, once per missing key and batch
                push @{ $set{$f} }, [ $key, $value ];
            }
        }
        $c{gets} += $n if $measured;
        $client->{$_}->set_multi(@{ $set{$_} }) for keys %set;
    }
    my $st = stats($server->address);
    $server->stop;
    @c{qw(items evictions seconds)} = ($st->{curr_items}, $st->{evictions}, now - $t0);
    return \%c;
}

my %result;
for my $s (@ZIPF) {
    print STDERR "drawing ", commas($WARMUP + $GETS), " requests from Zipf($s) over ", commas($KEYS), " keys\n";
    my $seq = requests($s);
    for my $way (@WAYS) {
        if ($way->{unavailable}) { $result{$s}{ $way->{name} } = { unavailable => $way->{unavailable} }; next }
        print STDERR "read-through loop on a $MEMORY_MB MB memcached: Zipf($s), $way->{name}\n";
        $result{$s}{ $way->{name} } = run_way($way, $seq);
    }
}

# ---- the table -------------------------------------------------------------------------------

my $BASE = $WAYS[0]{name};
printf "Read-through cache on a %d MB memcached (-m %d): get_multi of %d requests at a time, each missing key "
     . "fetched (from the corpus) and set; %s keys (%s values of bench/data/values, the fill half, spread over "
     . "the keys), requests drawn from Zipf over them, seed %d; %s gets of warm-up, then %s counted. "
     . "The set: `cmrx-dict train --all` on the training half\n\n",
    $MEMORY_MB, $MEMORY_MB, $BATCH, commas($KEYS), join('/', @FAMILIES), $opt{seed}, commas($WARMUP), commas($GETS);
my @rows;
for my $s (@ZIPF) {
    my $base = $result{$s}{$BASE};
    for my $way (@WAYS) {
        my $r = $result{$s}{ $way->{name} };
        push @rows, $r->{unavailable}
            ? [ "Zipf($s)", $way->{name}, 'not available', ('-') x 5 ]
            : [ "Zipf($s)", $way->{name}, commas($r->{items}), sprintf('%.1f %%', 100 * $r->{hits} / $r->{gets}),
                sprintf('%.1f', 1000 * $r->{fetches} / $r->{gets}),
                sprintf('%.2fx', $r->{fetches} / $base->{fetches}), $r->{wrong}, sprintf('%.0f', $r->{seconds}) ];
    }
}
table([ 'requests', 'way', 'items held', 'hit rate', 'fetches per 1,000 gets', 'fetches vs gzip', 'wrong values', 'seconds' ], @rows);
print "  ($_->{name}: not available: $_->{unavailable})\n" for grep { $_->{unavailable} } @WAYS;
my @warm = map { my $s = $_; map { my $r = $result{$s}{$_}; $r->{unavailable} || $r->{warm_evictions} ? () : "Zipf($s)/$_" } keys %{ $result{$s} } } @ZIPF;
print "\nChecks: every value read back (", commas(eval { my $n = 0; for my $s (@ZIPF) { $n += $_->{read} || 0 for values %{ $result{$s} } } $n }),
      ") equal to the value set: ",
      (join(', ', map { my $s = $_; map { $result{$s}{$_}{wrong} ? "Zipf($s)/$_: $result{$s}{$_}{wrong} WRONG" : () } keys %{ $result{$s} } } @ZIPF) || 'yes'),
      "; the server evicting before the counted gets: ", (@warm ? 'NO for ' . join(', ', @warm) . ' (a longer --warmup)' : 'yes everywhere'), "\n";
if (my $r = $result{'0.99'}) {
    my $o = $r->{'the set, one Fast object'};
    print "\nBar: the single Fast object's backend fetches under Zipf(0.99) at most ${BAR_ONE}x gzip's: ",
          $o->{unavailable} ? "not evaluated (not available)\n"
          : sprintf("%s %.2fx\n", ($o->{fetches} / $r->{$BASE}{fetches} <= $BAR_ONE && !$o->{wrong} ? '✓' : '✗'), $o->{fetches} / $r->{$BASE}{fetches});
}
print "The training's report: bench/results/hitrate-train.txt\n";

if (eval { require JSON::PP; 1 }) {
    open my $j, '>', "$out/hitrate.json" or die "$out/hitrate.json: $!\n";
    print {$j} JSON::PP->new->canonical->pretty->encode({
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), perl => sprintf('%vd', $^V),
        memory_mb => $MEMORY_MB, keys => $KEYS, warmup => $WARMUP, gets => $GETS, batch => $BATCH,
        seed => $opt{seed}, families => \@FAMILIES, results => \%result,
    });
    close $j;
    print "results: bench/results/hitrate.json\n";
}
