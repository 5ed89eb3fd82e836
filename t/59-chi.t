#!/usr/bin/perl
# CHI's memcached drivers with a dictionary set, as the operations guide's
# recipe makes them (Cache::Memcached::RustXS::Operations, "CHI"): the
# Memcached::Fast driver with fast_options in memd_params, and the
# Memcached driver with memd_class Cache::Memcached::RustXS::Memcached. What
# memcached holds under CHI's namespace is a zstd frame naming the set's
# dictionary, and CHI reads back the value it set (a string and a hash);
# CHI's own compress_threshold, which would gzip before our compressor
# sees the value, is left out. Skips without CHI or its memcached
# drivers (Debian: libchi-perl, libchi-driver-memcached-perl), without a
# client, or without memcached.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary frame_dictionary_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_get);

for my $module (qw(CHI CHI::Driver::Memcached::Base)) {
    plan skip_all => "$module is not installed (Debian: libchi-perl, libchi-driver-memcached-perl)"
        unless eval "require $module; 1";
}
my $server = CMRXTest::Memcached->start_or_skip;
my $ADDR = $server->address;
my $F_COMPRESS = 2;

# A set with a dictionary for CHI's namespace and a whole-cache entry,
# trained on JSON of the corpus (CHI stores its own header and Storable's
# bytes around each value: the dictionaries still find the JSON in them).
my $TMP = File::Temp->newdir;
my $dir = "$TMP/dictionaries";
my $corpus = corpus_values('bench/data/values');
my @gh = map { $_->[1] } @{ $corpus->{gh} };
my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
my $products = $set->add(prefix => 'products:', dictionary => train_dictionary(\@gh, size => 8192), level => 3,
                         id => $set->new_id)->{id};
my $whole = $set->add(prefix => '', dictionary => train_dictionary([ reverse @gh ], size => 8192), level => 3,
                      id => $set->new_id)->{id};
$set->write;
my @warnings;
$SIG{__WARN__} = sub { push @warnings, $_[0] };

my $value = $gh[1];
my $data  = { name => 'a product', json => $gh[2], tags => [qw(a b c)] };

# How memcached holds CHI's key: (flags, the dictionary its frame names).
sub stored {
    my ($key) = @_;
    my ($flags, $bytes) = raw_get($ADDR, $key);
    return ('missing') unless defined $flags;
    return ($flags, frame_dictionary_id($bytes), length $bytes);
}

SKIP: {
    skip fast_missing(), 4 if fast_missing();
    skip 'CHI::Driver::Memcached::Fast is not installed', 4 unless eval { require CHI::Driver::Memcached::Fast; 1 };
    my $cache = CHI->new(
        driver      => 'Memcached::Fast',
        namespace   => 'products',
        memd_params => {
            servers => [$ADDR],
            Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $dir),
        },
    );
    $cache->set(fast_string => $value);
    $cache->set(fast_hash => $data);
    my ($flags, $id, $bytes) = stored('products:fast_string');
    is_deeply [ $flags & $F_COMPRESS, $id ], [ $F_COMPRESS, $whole ],
        'CHI with Memcached::Fast: stored as zstd with the whole-cache dictionary';
    cmp_ok $bytes, '<', length($value) / 2, '... in less than half the bytes';
    is $cache->get('fast_string'), $value, '... and read back';
    is_deeply $cache->get('fast_hash'), $data, '... a hash too';
}

SKIP: {
    skip cache_memcached_missing(), 4 if cache_memcached_missing();
    skip 'CHI::Driver::Memcached is not installed', 4 unless eval { require CHI::Driver::Memcached; 1 };
    my $cache = CHI->new(
        driver      => 'Memcached',
        namespace   => 'products',
        memd_class  => 'Cache::Memcached::RustXS::Memcached',
        memd_params => {
            servers            => [$ADDR],
            compress_threshold => 100,
            zstd               => { dictionaries => $dir },
        },
    );
    $cache->set(cm_string => $value);
    $cache->set(cm_hash => $data);
    my ($flags, $id, $bytes) = stored('products:cm_string');
    is_deeply [ $flags & $F_COMPRESS, $id ], [ $F_COMPRESS, $products ],
        'CHI with Memcached and Cache::Memcached::RustXS::Memcached: stored as zstd with the namespace\'s dictionary';
    cmp_ok $bytes, '<', length($value) / 2, '... in less than half the bytes';
    is $cache->get('cm_string'), $value, '... and read back';
    is_deeply $cache->get('cm_hash'), $data, '... a hash too';
}

is_deeply \@warnings, [], 'no warning';
done_testing;
