package Cache::Memcached::RustXS::Dict::Sets;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Dict::SetTrainer qw(train_all report_set whole_cache_samples);
use Cache::Memcached::RustXS::Dict::Files ();
use Cache::Memcached::RustXS::Dict::Report qw(print_train_all print_report_set set_data);
use Cache::Memcached::RustXS::Dict::Tune qw(worth_a_dictionary);

our $VERSION = '1.000';

# The functions this module had, from where they live now.
our @EXPORT_OK = qw(train_all report_set read_dump print_train_all print_report_set json_data
                    worth_a_dictionary whole_cache_samples);

our $DEFAULT_IF_BETTER = $Cache::Memcached::RustXS::Dict::SetTrainer::DEFAULT_IF_BETTER;

sub read_dump { Cache::Memcached::RustXS::Dict::Files->read(@_) }
sub json_data { set_data(@_) }

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Sets - the old name of Cache::Memcached::RustXS::Dict::SetTrainer, kept working

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Sets qw(read_dump whole_cache_samples);

    # Written for 0.101 and before: the same functions, from their new homes
    my ($pool, $shares) = whole_cache_samples([
        { prefix => 'user', keys => 30, pairs => [ map { [ "user:$_", "value $_" ] } 1 .. 3 ] },
        { prefix => 'page', keys => 10, pairs => [ [ 'page:1', 'a page' ] ] },
    ]);
    print scalar(@$pool), " values pooled: user $shares->{user}, page $shares->{page}\n";   # 4: 3 and 1

=head1 DESCRIPTION

Up to 0.101 this module held C<cmrx-dict train --all>, C<report
--dictionaries>, the reading of files of get responses and their output,
under a name that sat confusingly beside
L<Cache::Memcached::RustXS::Zstd::DictionarySet>. Those now live apart:

=over 4

=item L<Cache::Memcached::RustXS::Dict::SetTrainer>

C<train_all>, C<report_set>, C<whole_cache_samples>, and the one decision
they share.

=item L<Cache::Memcached::RustXS::Dict::Files>

C<read_dump(\@files)> is C<< Cache::Memcached::RustXS::Dict::Files->read(\@files) >>.

=item L<Cache::Memcached::RustXS::Dict::Report>

C<print_train_all>, C<print_report_set>; C<json_data> is its C<set_data>.

=item L<Cache::Memcached::RustXS::Dict::Tune>

C<worth_a_dictionary>.

=back

This module loads them and exports the old names on request, so that
code written against it runs unchanged. New code uses the modules above.

=head1 FUNCTIONS

=over 4

=item train_all, report_set, whole_cache_samples, read_dump, print_train_all, print_report_set, json_data, worth_a_dictionary

As above; C<$Cache::Memcached::RustXS::Dict::Sets::DEFAULT_IF_BETTER> is
SetTrainer's.

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Dict> lists the modules of L<cmrx-dict> as
they are now.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
